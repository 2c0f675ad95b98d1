"""An optional gate in front of a service: every call needs a service token.

``ServiceTokenInterceptor(tokens, services)`` checks the bearer token of each
call to one of ``services`` (full names, e.g. ``tabletop.rules.v1.RulesService``)
before its handler runs: none or an invalid one is ``UNAUTHENTICATED``
(``missing_token``, ``invalid_token``, ``token_expired``), a player's token is
``PERMISSION_DENIED service_only``. Health checking and reflection stay open
(probes and load balancers carry no token). It is a guard of the server's
``RpcInterceptor`` (``guards=``): part of the one wrapper of each method,
inside its error mapping, so its refusals become rich statuses. As an
interceptor of its own it goes after an ``RpcInterceptor`` in the server's
list, so that one maps its refusals.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from typing import Any

import grpc

from services.common.auth import Tokens
from services.common.errors import PermissionDenied
from services.common.logging import bind, wrap_handler

__all__ = ["ServiceTokenInterceptor"]


class ServiceTokenInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, tokens: Tokens, services: Collection[str]) -> None:
        self.tokens = tokens
        self.services = frozenset(services)

    def _check(self, metadata: Any) -> None:
        principal = self.tokens.from_metadata(metadata)
        if not principal.is_service:
            raise PermissionDenied("service_only", "this service takes calls from services only")
        bind(caller=principal.subject)

    def _guarded(self, method: str) -> bool:
        service = (method or "").split("/")[1:2]
        return bool(service) and service[0] in self.services

    def unary_check(self, method: str) -> Callable[[Any, Any], Awaitable[None]] | None:
        """The check before a unary call of ``method`` (None: not gated)."""
        if not self._guarded(method):
            return None
        check = self._check

        async def unary_check(request: Any, context: Any) -> None:
            check(context.invocation_metadata())

        return unary_check

    def stream_wrapper(
        self, method: str
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]] | None:
        """The wrapper of a response stream of ``method`` (None: not gated)."""
        if not self._guarded(method):
            return None
        check = self._check

        def wrap(behavior: Callable[..., Any]) -> Callable[..., Any]:
            def stream(request: Any, context: Any) -> Any:
                check(context.invocation_metadata())
                return behavior(request, context)

            return stream

        return wrap

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None or not self._guarded(handler_call_details.method):
            return handler
        metadata = handler_call_details.invocation_metadata
        check = self._check

        def wrapper(behavior: Callable[..., Any], streaming: bool) -> Callable[..., Any]:
            if streaming:

                def stream(request: Any, context: Any) -> Any:
                    check(metadata)
                    return behavior(request, context)

                return stream

            async def unary(request: Any, context: Any) -> Any:
                check(metadata)
                return await behavior(request, context)

            return unary

        return wrap_handler(handler, wrapper)

"""An optional gate in front of a service: every call needs a service token.

``ServiceTokenInterceptor(tokens, services)`` checks the bearer token of each
call to one of ``services`` (full names, e.g. ``tabletop.rules.v1.RulesService``)
before its handler runs: none or an invalid one is ``UNAUTHENTICATED``
(``missing_token``, ``invalid_token``, ``token_expired``), a player's token is
``PERMISSION_DENIED service_only``. Health checking and reflection stay open
(probes and load balancers carry no token). Put it after ``ErrorInterceptor``
so its refusals become rich statuses.
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

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        service = (handler_call_details.method or "").split("/")[1:2]
        if handler is None or not service or service[0] not in self.services:
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

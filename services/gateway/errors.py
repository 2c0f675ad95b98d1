"""Errors as JSON: the gRPC status, the same reason codes, a matching HTTP status.

Every refusal the gateway sends has the body::

    {"error": {"status": "FAILED_PRECONDITION", "reason": "not_your_turn",
               "message": "...", "metadata": {...}}}

``status`` and ``reason`` are exactly those a gRPC client of the same service
gets (see docs/gateway.md); ``RESOURCE_EXHAUSTED`` also sets ``Retry-After``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

MAX_MESSAGE = 500

HTTP_STATUS: dict[str, int] = {
    "INVALID_ARGUMENT": 400,
    "OUT_OF_RANGE": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "ABORTED": 409,
    "FAILED_PRECONDITION": 409,
    "RESOURCE_EXHAUSTED": 429,
    "CANCELLED": 499,
    "UNIMPLEMENTED": 501,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}


@dataclass(slots=True)
class GatewayError(Exception):
    """A refusal, as a gRPC status name plus a reason code."""

    status: str
    reason: str
    message: str
    metadata: dict[str, str] = field(default_factory=dict)
    retry_after_s: float | None = None

    @property
    def http_status(self) -> int:
        return HTTP_STATUS.get(self.status, 500)

    def body(self) -> dict[str, Any]:
        return {
            "error": {
                "status": self.status,
                "reason": self.reason,
                "message": self.message[:MAX_MESSAGE],
                "metadata": self.metadata,
            }
        }


def bad_request(reason: str, message: str) -> GatewayError:
    return GatewayError("INVALID_ARGUMENT", reason, message)


def from_rpc(e: grpc.aio.AioRpcError) -> GatewayError:
    """The gateway's form of a gRPC refusal: same status, same reason."""
    code = e.code()
    reason, metadata, retry = "", {}, None
    try:
        status = rpc_status.from_call(e)  # type: ignore[arg-type]
    except ValueError:
        status = None
    for detail in status.details if status is not None else ():
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reason, metadata = info.reason, dict(info.metadata)
        elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            r = error_details_pb2.RetryInfo()
            detail.Unpack(r)
            retry = r.retry_delay.seconds + r.retry_delay.nanos / 1e9
    if not reason:
        reason = {
            grpc.StatusCode.UNAVAILABLE: "upstream_unavailable",
            grpc.StatusCode.DEADLINE_EXCEEDED: "upstream_timeout",
        }.get(code, code.name.lower())
    metadata.pop("error", None)  # the server's class name: not the client's business
    return GatewayError(code.name, reason, e.details() or "", metadata, retry)

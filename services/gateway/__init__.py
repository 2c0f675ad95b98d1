"""The gateway: HTTP + JSON and WebSockets for browsers, over the gRPC services."""

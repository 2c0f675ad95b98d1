"""The rules service: the stateless gRPC face of ``engine_core``."""

"""The generated stubs (fencegate.v1), with a clear error when missing.

They are generated at build or test time by generate_stubs.py, never
committed. Internal: import the public API from ``fencegate``.
"""

try:
    from fencegate.v1 import errors_pb2, gateway_pb2, gateway_pb2_grpc  # noqa: F401
    from fencegate.v1 import lock_pb2, lock_pb2_grpc, token_pb2  # noqa: F401
except ImportError as e:  # pragma: no cover - an installation problem
    raise ImportError(
        "fencegate's gRPC stubs (fencegate.v1) are missing: install the package with "
        "`pip install --no-build-isolation --no-index ./clients/python` (which generates "
        "them), or run clients/python/generate_stubs.py (docs/python.md)") from e

__all__ = ["errors_pb2", "gateway_pb2", "gateway_pb2_grpc", "lock_pb2", "lock_pb2_grpc",
           "token_pb2"]

"""The index's schema version, apart from core/index/store.py so that readers on the fast path (`eywa get`)
can tell an index that needs migrating without importing the store and the handoff model."""

SCHEMA_VERSION = "7"  # 6: each handoff names its agent; 7: and its machine

"""Segment storage: each segment's table shards as immutable Arrow IPC chunk files.

- chunk.py        write and memory-map one chunk file; ChunkInfo
- stats.py        per-chunk column statistics (min, max, null count)
- manifest.py     a table's manifest and a transaction's prepared delta, replaced atomically
- shard_store.py  ShardStore: tables, transactional writes, snapshots, commit, recovery

Where rows go (which segment) is decided by motion.hashing, not here.
"""

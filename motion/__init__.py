"""Motion: moving Arrow record batches between slices of a distributed plan.

hashing.py holds the one distribution hash (shared with segment storage placement) and the
partitioning of batches by segment. Frames, transports and routes live in sibling modules.
Submodules are imported explicitly (`from motion import hashing`) so that importing the
package stays cheap and does not load numba.
"""

"""COPY ingest on the segments and the coordinator: parsing COPY's formats into typed Arrow.

- copy_text     TEXT and CSV framing (COPY FROM STDIN and server files), block by block
- copy_escapes  TEXT format's backslash escapes
- copy_binary   PostgreSQL's binary COPY format, both directions
- copy_binary_array  binary COPY FROM of array columns (array_recv)
- file_source   COPY FROM a server-side file (CSV, TEXT, binary, Parquet)
- convert       text and typed Arrow columns to the table's physical columns (conform,
                convert, widen), with PostgreSQL's input errors
- base, numeric, interval  convert's helpers

COPY's vocabulary (CopyFormat, CopyOptions, parse_copy_options) is planner/copy_options.py.
"""

"""Trace files -> columnar tables: decoding, repairs and the schema of every format generation."""

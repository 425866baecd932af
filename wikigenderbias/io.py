"""Old home of the atomic writers, now :mod:`wgbcore.atomicio` (``atomic_write_text``,
``atomic_write_json``, ...)."""
# kept until relext is migrated: relext still imports these names from here
from wgbcore.atomicio import atomic_write_bytes, clean_json, iter_jsonl
from wgbcore.atomicio import atomic_write_json as write_json_atomic
from wgbcore.atomicio import atomic_write_text as write_text_atomic

__all__ = ["atomic_write_bytes", "write_text_atomic", "write_json_atomic", "clean_json", "iter_jsonl"]

"""relext package."""


def __getattr__(name):
    # relext.load_pretrained(name): the packaged extractor, imported only when asked for
    if name == "load_pretrained":
        from relext.pretrained import load

        return load
    raise AttributeError(f"module 'relext' has no attribute {name!r}")

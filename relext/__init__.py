"""relext package."""

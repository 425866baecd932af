"""`python -m wgb ...` is the `wgb` command."""
from wgb.cli import main

if __name__ == "__main__":
    main()

"""`make test-packaging`: each client installed as its README says, from a checkout with nothing
built in it, into a fresh project, and every README snippet run against a live daemon.

Run with `python -m tests.packaging [python|node|go|rust|cli ...]` (all by default); see
`tests/packaging/__main__.py` for what each language does and `tests/packaging/blocks.py` for
which README blocks run (the `synopsis` marker).
"""

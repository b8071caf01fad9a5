"""The Python client (clients/python) against the real daemon, and the shared conformance
scenarios."""

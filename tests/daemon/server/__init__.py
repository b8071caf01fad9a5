"""The transport (server.py, admission, tcpfront, connections, auth, lifecycle): limits,
overload, security."""

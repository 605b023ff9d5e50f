"""Storage failures on demand for tests/gcs_emulator.py: an HTTP relay that fails chosen requests.

FaultRelay sits between the emulator's TLS proxy and fake-gcs-server (plain HTTP on 127.0.0.1). A rule
(substring of the URL-decoded request target, action) makes matching requests fail: "error" answers
503 as an overloaded GCS does; "drop" closes the connection unanswered, as a stopped server does. All
other requests pass through unchanged. `times` makes a rule transient: it fails only the first N requests it
matches (an overloaded service that recovers), then lets them through.
"""

from __future__ import annotations

import http.client
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.gcs_emulator import GcsEmulator

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length"}


class FaultRelay:
    """Relays HTTP to `upstream_port`, failing requests whose decoded target contains a rule's substring."""

    def __init__(self, upstream_port: int, rules: dict[str, str], times: dict[str, int] | None = None):
        if set(rules.values()) - {"error", "drop"}:
            raise ValueError(f"rule actions are 'error' or 'drop', got {rules}")
        if set(times or {}) - set(rules):
            raise ValueError(f"times names substrings without a rule: {sorted(set(times or {}) - set(rules))}")
        self.rules = dict(rules)
        self.left = dict(times or {})  # failures left for a transient rule; rules not named fail every time
        self.failed: list[str] = []
        self.seen: list[str] = []  # every request relayed or failed, "METHOD target"
        self._counting = threading.Lock()
        relay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def _relay(self) -> None:
                body = self._body()
                target = urllib.parse.unquote(self.path)
                relay.seen.append(f"{self.command} {target}")
                action = relay._action(target)
                if action is not None:
                    relay.failed.append(f"{self.command} {target} -> {action}")
                    if action == "drop":
                        self.close_connection = True
                        return
                    payload = b'{"error": {"code": 503, "message": "injected by FaultRelay"}}'
                    self.send_response(503)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                upstream = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=60)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    response = upstream.getresponse()
                    payload = response.read()
                    self.send_response(response.status, response.reason)
                    for name, value in response.getheaders():
                        if name.lower() not in _HOP_BY_HOP:
                            self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(payload)
                finally:
                    upstream.close()

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return b"".join(chunks)
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _relay

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="gcs-fault-relay", daemon=True)
        self._thread.start()

    def _action(self, target: str) -> str | None:
        with self._counting:
            for substring, action in self.rules.items():
                if substring not in target:
                    continue
                if substring not in self.left:
                    return action
                if self.left[substring] > 0:
                    self.left[substring] -= 1
                    return action
            return None

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def insert_relay(emulator: GcsEmulator, rules: dict[str, str], times: dict[str, int] | None = None) -> FaultRelay:
    """Puts a FaultRelay between a running emulator's TLS proxy and its server (for connections made after)."""
    relay = FaultRelay(emulator.port, rules, times)
    emulator._proxy._upstream_port = relay.port  # the proxy reads it for every new connection
    return relay

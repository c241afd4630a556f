"""Language-server benchmark: one command, figures against targets and same-run baselines.

    python benchmarks/bench_lsp.py [--lines 5000] [--hovers 300] [--edits 60] [--runs 3]

On a generated, realistic 5,000-line torch file (models, training loops, data code, plain
Python) it measures, through a real client talking to ``python -m kb lsp`` over stdio:

- hover latency: server-side (time inside the handler, from the server's DEBUG timings)
  and end-to-end; baseline: a hover on an unopened document (the transport alone);
- diagnostics latency: didChange -> publishDiagnostics for that version, per kind of edit
  (typing mid-file, a new line inside a method, a line appended at the end of the file):
  sent (server-side) and parsed by this client (the target applies here);
- cold start: process spawn -> first diagnostics of the file; baseline: spawning Python to
  import ``lsprotocol.types`` alone (a dependency every pygls server pays for); both with
  bytecode compiled, as an installed package has it;
- server RSS with no document open (once pygls is loaded: a request has been answered) and
  with the file open;
- CPU time (user + system) of the server and of this client per edit, and of the server up to
  its first diagnostics: figures that a busy machine does not inflate the way it inflates wall
  times (on a shared 2-core VM at load 10, a wall time is several times its CPU time).

Every figure is the median over ``--runs`` runs (cold starts, and whole edit sessions, each
with its own server): timing on a shared 2-core VM is noisy, and one busy moment should not
decide a percentile.  A percentile is taken within each session, then the median across them.
The cold start is timed from the spawn, as defined above: the test client is built before the
clock starts (building its converter is the client's work), and no RSS probe runs inside it (the
idle RSS is read in the edit sessions, before the file is opened; psutil is imported up front;
importing it inside the first cold start once charged ~15 ms of the client's work to the server).
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402
from pygls.protocol import LanguageServerProtocol  # noqa: E402

TARGETS = {"hover_server_p99": 10.0, "diagnostics_p95": 50.0, "cold_start": 1000.0, "storm_hover_p95": 100.0}

MODEL = '''

class Block{i}(nn.Module):
    """Residual block {i}: linear, norm, dropout."""

    def __init__(self, dim=64, hidden=256, p=0.1):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden, bias=False)
        self.fc2 = nn.Linear(hidden, dim)
        self.norm = nn.LayerNorm(dim)
        self.drop = nn.Dropout(p=p)
        self.scale = dim ** -0.5

    def forward(self, x, mask=None):
        h = F.relu(self.fc1(self.norm(x)))
        h = self.drop(self.fc2(h)) * self.scale
        if mask is not None:
            h = h.masked_fill(mask, 0.0)
        return x + h
'''
TRAIN = '''

def train_{i}(model, loader, epochs=2, lr=1e-3):
    """Train for a few epochs; returns the last loss."""
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
    model.train()
    loss_value = 0.0
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):
            opt.zero_grad()
            out = model(x.view(x.size(0), -1))
            loss = F.cross_entropy(out, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            loss_value = loss.item()
        sched.step()
    return loss_value
'''
DATA = '''

def make_loader_{i}(n=128, dim=64, batch=16):
    xs = torch.randn(n, dim)
    ys = torch.randint(0, 10, (n,))
    data = torch.utils.data.TensorDataset(xs, ys)
    return torch.utils.data.DataLoader(data, batch_size=batch, shuffle=True)


def summarize_{i}(values):
    """Plain Python: no torch here."""
    total = sum(values)
    mean = total / max(len(values), 1)
    ordered = sorted(values)
    middle = ordered[len(ordered) // 2] if ordered else 0
    return {{"total": total, "mean": mean, "median": middle}}


@torch.no_grad()
def evaluate_{i}(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        pred = model(x).argmax(dim=1)
        correct += (pred == y).sum().item()
    return correct / len(loader.dataset)
'''
HEADER = '"""Generated benchmark module."""\nimport math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n'


SCRIPT = '''

def run_{i}(model, loader, epochs=1, device="cpu"):
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    factory = {{"device": device, "dtype": torch.float32}}
    running = torch.zeros(1, **factory)
    model.to(device)
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            opt.zero_grad()
            out = model(x)
            loss = loss_fn(out, y)
            loss.backward()
            opt.step()
            running += loss.detach()
        for group in opt.param_groups:
            group["lr"] = group["lr"] * 0.9
    return running.item()
'''
EINOPS = '''

def attend_{i}(q, k, v, heads=8):
    q = rearrange(q, "b n (h d) -> b h n d", h=heads)
    k = rearrange(k, "b n (h d) -> b h n d", h=heads)
    v = rearrange(v, "b n (h d) -> b h n d", h=heads)
    scores = torch.einsum("bhid,bhjd->bhij", q, k) * q.shape[-1] ** -0.5
    h = torch.einsum("bhij,bhjd->bhid", scores.softmax(dim=-1), v)
    h = rearrange(h, "b h n d -> b n (h d)")
    pos = repeat(torch.arange(h.shape[1]), "n -> b n", b=h.shape[0])
    return reduce(h, "b n d -> b d", "mean") + pos.float().mean()
'''
METHODS = '''

def reshape_{i}(x, y, dims=(0, 2, 1)):
    a = x.view(x.size(0), -1).contiguous()
    b = y.permute(*dims).reshape(y.shape[0], -1)
    c = a.transpose(0, 1).unsqueeze(0).squeeze(0)
    d = b.clamp(min=0).sqrt().sum(dim=-1, keepdim=True)
    e = c.masked_fill(c > 1, 0.0).mean(dim=0).expand_as(d.t())
    return a.float() + b.type_as(a) + d.repeat(1, a.shape[1]).detach() + e.norm()
'''
EINOPS_HEADER = HEADER + "from einops import rearrange, reduce, repeat\n"


def _repeated(lines: int, parts: tuple[str, ...], header: str = HEADER) -> str:
    found, i = [header], 0
    while sum(p.count("\n") for p in found) < lines:
        found.append(parts[i % len(parts)].format(i=i))
        i += 1
    return "".join(found)


def _long_function(lines: int) -> str:
    body = ["    h = x", "    acc = torch.zeros(4)"]
    i = 0
    while len(body) < lines - 10:
        body += [f"    h = F.relu(self_fc{i % 7}(h)) * 0.5",  # (h = self.drop(self.fc2(h)) * self.scale: the anchor)
                 "    h = self.drop(self.fc2(h)) * self.scale",
                 f"    acc = acc + h.view(-1)[:4].float() / {i + 1}"]
        i += 1
    return HEADER + "\n\ndef forward_all(self, x, " + ", ".join(f"self_fc{j}" for j in range(7)) + "):\n" \
        + "\n".join(body) + "\n    return acc\n"


SHAPES = {  # name -> (source of about N lines, the text of the lines edits go to)
    "mixed": (lambda n: _repeated(n, (MODEL, TRAIN, DATA)), "h = self.drop(self.fc2(h)) * self.scale"),
    "model-classes": (lambda n: _repeated(n, (MODEL,)), "h = self.drop(self.fc2(h)) * self.scale"),
    "training-loops": (lambda n: _repeated(n, (SCRIPT,)), "loss = loss_fn(out, y)"),
    "einops-heavy": (lambda n: _repeated(n, (EINOPS,), EINOPS_HEADER), "h = rearrange(h, "),
    "tensor-methods": (lambda n: _repeated(n, (METHODS,)), "d = b.clamp(min=0)"),
    "long-function": (_long_function, "h = self.drop(self.fc2(h)) * self.scale"),
}


def make_source(lines: int, shape: str = "mixed") -> str:
    return SHAPES[shape][0](lines)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


class TimingProtocol(LanguageServerProtocol):
    """Stamps publishDiagnostics when this client has parsed its JSON (``published``; ``structure_message``
    runs on the whole message once ``json.loads`` has read it), before pygls builds objects from it (turning thousands of
    diagnostics into lsprotocol classes is this Python client's cost, not the server's)."""

    def structure_message(self, data):
        # (called for every JSON object of a message, thousands per publication: the cheap test first)
        if "jsonrpc" in data and data.get("method") == types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
            params = data.get("params") or {}
            key = (params.get("uri"), params.get("version"))
            owner = self.owner
            owner.published[key] = time.perf_counter()
            owner.arrived.set()
            if owner.payload is None:  # once, after the stamp: the size of one publication
                found = params.get("diagnostics") or []
                owner.payload = (len(found), len(json.dumps(data, separators=(",", ":"))))
            data = dict(data, params=dict(params, diagnostics=[]))
        return super().structure_message(data)


class Client(LanguageClient):
    def __init__(self) -> None:
        super().__init__("bench", "1", protocol_cls=TimingProtocol)
        self.published: dict[tuple[str, int], float] = {}  # when this client had parsed the message
        self.protocol.owner = self
        self.payload: tuple[int, int] | None = None  # (diagnostics, bytes) of the first publication
        self.arrived = asyncio.Event()

        @self.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _diagnostics(params: types.PublishDiagnosticsParams) -> None:
            pass

        @self.feature(types.WINDOW_SHOW_MESSAGE)
        def _message(params) -> None:
            pass

    async def wait_published(self, uri: str, version: int, timeout: float = 60) -> float:
        async def wait() -> float:
            while (uri, version) not in self.published:
                self.arrived.clear()
                await self.arrived.wait()
            return self.published[(uri, version)]

        return await asyncio.wait_for(wait(), timeout)


async def start(client: Client, env: dict, log: Path) -> Client:
    await client.start_io(sys.executable, "-m", "kb", "lsp", "--log-level", "DEBUG", "--log-file", str(log),
                          env=env, cwd=str(ROOT))
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(), process_id=os.getpid(), root_uri=ROOT.as_uri()))
    client.initialized(types.InitializedParams())
    return client


async def stop(client: Client) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def did_open(client: Client, uri: str, text: str) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))


def rss_mb(client: Client) -> float:
    import psutil  # imported by main() before any timing

    servers = psutil.Process().children()  # the one server this benchmark runs at a time
    return sum(p.memory_info().rss for p in servers) / 2**20


def server_cpu_ms() -> float:
    """CPU time (user + system) the server has used so far."""
    import psutil

    return sum(sum(p.cpu_times()[:2]) for p in psutil.Process().children()) * 1000


async def cold_start(env: dict, text: str, uri: str, log: Path) -> tuple[float, float]:
    """(ms from spawn to the first diagnostics parsed, the server's CPU ms up to then)."""
    client = Client()  # the test client's own set-up (its converter) is not the server's start
    started = time.perf_counter()
    await start(client, env, log)
    did_open(client, uri, text)
    arrived = await client.wait_published(uri, 1)
    cpu = server_cpu_ms()  # (after the stamp: not part of the timing)
    await stop(client)
    return (arrived - started) * 1000, cpu


def baseline_start() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import lsprotocol.types"], check=True)
    return (time.perf_counter() - started) * 1000


HOVERED = r"\b(nn\.Linear|F\.relu|torch\.optim\.\w+|nn\.Dropout|x\.view|torch\.einsum|y\.permute|torch\.zeros)\b"


def hover_points(text: str, count: int) -> list[tuple[int, int]]:
    lines = text.splitlines()
    found = [(n, m.start() + 2) for n, line in enumerate(lines)
             for m in re.finditer(r"\b(nn\.Linear|F\.relu|torch\.optim\.\w+|nn\.Dropout|x\.view|torch\.einsum|y\.permute|torch\.zeros)\b", line)]
    step = max(1, len(found) // count)
    return found[::step][:count]


async def measure(env: dict, text: str, args: argparse.Namespace, log: Path) -> dict:
    uri = (ROOT / "bench_model.py").as_uri()
    client = await start(Client(), env, log)
    await client.text_document_hover_async(types.HoverParams(  # a round trip: the server is fully up
        text_document=types.TextDocumentIdentifier(uri=uri + ".unopened"), position=types.Position(line=0, character=0)))
    result: dict = {"rss_idle": rss_mb(client)}
    did_open(client, uri, text)
    await client.wait_published(uri, 1)
    result["payload"] = client.payload

    async def hover(target: str, line: int, character: int) -> float:
        started = time.perf_counter()
        await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=target), position=types.Position(line=line, character=character)))
        return (time.perf_counter() - started) * 1000

    points = hover_points(text, args.hovers)
    result["hover_e2e"] = [await hover(uri, line, col) for line, col in points]
    result["hover_base"] = [await hover(uri + ".unopened", 0, 0) for _ in range(len(points))]

    lines, version = text.splitlines(), 1
    times: dict[str, list[float]] = {kind: [] for kind in KINDS}
    server_before, client_before = server_cpu_ms(), time.process_time()
    with gc_pauses() as result["client_gc"], gc_pauses(full=True) as result["client_full_gc"]:
        version = await edit(client, uri, lines, version, args.edits, times, args.anchor)
    result["server_cpu"] = [(server_cpu_ms() - server_before) / args.edits]
    result["client_cpu"] = [(time.process_time() - client_before) * 1000 / args.edits]
    result.update(times)
    result["storm_hover"] = await storm(client, uri, lines, version, points, args.anchor)
    result["rss_end"] = rss_mb(client)
    await stop(client)
    return result


KINDS = ("typing", "typing", "new line", "appended line")  # the edit kinds, in turn


async def storm(client: Client, uri: str, lines: list[str], version: int, points: list[tuple[int, int]],
                anchor: str, changes: int = 150) -> list[float]:
    """Hover latencies (ms, end-to-end) while the file is typed into every 2 ms: one character per change at
    an anchor line, hovers sent one after another all the while (positions above the typing stay valid)."""
    rows = [n for n, line in enumerate(lines) if anchor in line]
    row = rows[len(rows) // 2]
    above = [(line, col) for line, col in points if line < row] or [(0, 0)]
    latencies: list[float] = []
    typing = True

    async def hovers() -> None:
        k = 0
        while typing:
            line, col = above[k % len(above)]
            started = time.perf_counter()
            await client.text_document_hover_async(types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=col)))
            latencies.append((time.perf_counter() - started) * 1000)
            k += 1

    task = asyncio.ensure_future(hovers())
    for _ in range(changes):
        version += 1
        where = types.Position(line=row, character=len(lines[row]))
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(range=types.Range(start=where, end=where),
                                                                    text=" ")]))
        lines[row] += " "
        await asyncio.sleep(0.002)
    typing = False
    await task
    await client.wait_published(uri, version)
    return latencies or [float("nan")]


async def edit(client: Client, uri: str, lines: list[str], version: int, edits: int,
               times: dict[str, list[float]], anchor: str = "h = self.drop(self.fc2(h)) * self.scale") -> int:
    """Typing mid-file, a new line inside a method, a line appended at the end of the file, each timed
    from didChange to its publishDiagnostics parsed by this client."""
    for k in range(edits):
        rows = [n for n, line in enumerate(lines) if anchor in line]
        row = rows[(k * 7) % len(rows)]
        version += 1
        kind = KINDS[k % len(KINDS)]
        if kind == "new line":
            indent = lines[row][:len(lines[row]) - len(lines[row].lstrip())]
            at, text = (row, 0), f"{indent}h = F.relu(h)\n"
        elif kind == "appended line":
            at, text = (len(lines), 0), "print(torch.flatten(torch.zeros(2, 2)))\n"
        else:  # typing: one character at the end of an expression
            at, text = (row, len(lines[row])), " "
        where = types.Position(line=at[0], character=at[1])
        change = types.TextDocumentContentChangePartial(range=types.Range(start=where, end=where), text=text)
        sent = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=[change]))
        times[kind].append((await client.wait_published(uri, version) - sent) * 1000)
        if kind == "new line":
            lines.insert(row, text.rstrip("\n"))
        elif kind == "appended line":
            lines.insert(len(lines), text.rstrip("\n"))
        else:
            lines[row] += " "
        await asyncio.sleep(0.02)  # typing cadence: let each change settle
    return version


@contextlib.contextmanager
def gc_pauses(full: bool = False):
    """This (client) process's garbage-collection pauses in ms (``full``: of full collections only, in
    CPU ms), while the block runs: they land in whichever edit is being timed, so the report shows the
    longest beside the percentiles, and how many full collections the edits caused."""
    pauses: list[float] = [] if full else [0.0]
    started = [0.0]
    clock = time.thread_time if full else time.perf_counter

    def on_gc(phase: str, info: dict) -> None:
        if full and info["generation"] != 2:
            return
        if phase == "start":
            started[0] = clock()
        else:
            pauses.append((clock() - started[0]) * 1000)

    gc.callbacks.append(on_gc)
    try:
        yield pauses
    finally:
        gc.callbacks.remove(on_gc)


def server_timings(log: Path, name: str) -> list[float]:
    return [float(m.group(1)) for m in re.finditer(rf"timing {name} ([0-9.]+) ms", log.read_text())]


def split(timings: list[float], kind: str) -> list[float]:
    """Server-side timings of the edits of one kind (they come in turn: ``KINDS``)."""
    return [t for k, t in enumerate(timings) if KINDS[k % len(KINDS)] == kind] or [float("nan")]


def report(rows: list[tuple[str, float, float | None, str]]) -> None:
    print(f"{'measure':<52} {'value':>10} {'target':>8} {'ratio':>7}")
    for name, value, target, unit in rows:
        ratio = f"{value / target:6.2f}x" if target else ""
        tgt = f"{target:g}" if target else ""
        verdict = ("PASS" if value <= target else "FAIL") if target else ""
        print(f"{name:<52} {value:>8.1f}{unit:>2} {tgt:>8} {ratio:>7} {verdict}".rstrip())


def session(env: dict, text: str, args: argparse.Namespace, log: Path) -> dict:
    """One edit session with its own server, plus the server-side timings from its log."""
    log.write_text("")
    res = asyncio.run(measure(env, text, args, log))
    res["hover_server"] = server_timings(log, "hover")
    res["analysis"] = server_timings(log, "diagnostics")[1:]  # one per edit, after the first (full) one
    res["to_publish"] = server_timings(log, "change-to-publish")[1:]
    return res


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--hovers", type=int, default=300)
    parser.add_argument("--edits", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3, help="cold starts and edit sessions to take the median of")
    parser.add_argument("--shape", choices=[*SHAPES, "all"], default="mixed",
                        help="what the file is made of (all: each shape in turn)")
    args = parser.parse_args()
    if args.shape == "all":
        return max(run_shape(args, shape) for shape in SHAPES)
    return run_shape(args, args.shape)


def run_shape(args: argparse.Namespace, shape: str) -> int:
    args.anchor = SHAPES[shape][1]

    import psutil  # noqa: F401  (rss_mb's; imported here so that no timing includes it)

    from kb.query import ensure_db

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env["MSMAP_DB"] = str(ensure_db(quiet=False))  # build once, outside the timings
    # Bytecode for msmap's own modules, as ``pip install .`` writes for the installed copy (the
    # baseline's lsprotocol has it too); with PYTHONDONTWRITEBYTECODE set, every start would
    # otherwise compile kb/ and lsp/ again (~25-40 ms that no installed server pays).
    import compileall

    for package in ("kb", "lsp"):
        compileall.compile_dir(str(ROOT / package), quiet=1)
    text = make_source(args.lines, shape)
    load = os.getloadavg()[0]
    print(f"shape {shape}; file: {text.count(chr(10))} lines, {len(text) // 1024} KiB; "
          f"python {sys.version.split()[0]}; "
          f"median of {args.runs} runs; load average {load:.2f} at the start")
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        uri = (ROOT / "bench_cold.py").as_uri()
        starts, start_cpu = zip(*[asyncio.run(cold_start(env, text, uri, log)) for _ in range(args.runs)])
        base = statistics.median(baseline_start() for _ in range(args.runs))
        runs = [session(env, text, args, log) for _ in range(args.runs)]

    def med(key: str, q: float, kind: Optional[str] = None) -> float:
        """Median over the runs of each run's ``q``-th percentile of ``key`` (of the edits of one kind)."""
        return statistics.median(pct(r[key] if kind is None else split(r[key], kind), q) for r in runs)

    cold = statistics.median(starts)
    payload = runs[0]["payload"]
    rows: list[tuple[str, float, float | None, str]] = [
        ("hover, server-side p50 (ms)", med("hover_server", 50), None, "ms"),
        ("hover, server-side p99 (ms)", med("hover_server", 99), TARGETS["hover_server_p99"], "ms"),
        ("hover, end-to-end p50 (ms)", med("hover_e2e", 50), None, "ms"),
        ("hover, end-to-end p99 (ms)", med("hover_e2e", 99), None, "ms"),
        ("  baseline: unopened-document hover p50 (ms)", med("hover_base", 50), None, "ms"),
        ("hover during a 2 ms edit storm, end-to-end p95 (ms)", med("storm_hover", 95), TARGETS["storm_hover_p95"],
         "ms"),
    ]
    for kind in dict.fromkeys(KINDS):
        rows += [
            (f"{kind}: analysis, server-side p50 (ms)", med("analysis", 50, kind), None, "ms"),
            (f"{kind}: change -> publish sent, p95 (ms)", med("to_publish", 95, kind), None, "ms"),
            (f"{kind}: change -> diagnostics parsed by the client, p50 (ms)", med(kind, 50), None, "ms"),
            (f"{kind}: change -> diagnostics parsed by the client, p95 (ms)", med(kind, 95),
             TARGETS["diagnostics_p95"], "ms"),
        ]
    rows += [
        ("  the test client's longest GC pause in the edits (ms)", med("client_gc", 100), None, "ms"),
        ("  the test client's full collections in the edits", statistics.median(len(r["client_full_gc"]) for r in runs),
         None, ""),
        ("  the test client's CPU per full collection, median (ms)",
         statistics.median(statistics.median(r["client_full_gc"] or [0.0]) for r in runs), None, "ms"),
        ("edits: server CPU per edit, analysis to publication (ms)", med("server_cpu", 50), None, "ms"),
        ("edits: this client's CPU per edit, reading diagnostics (ms)", med("client_cpu", 50), None, "ms"),
        ("publishDiagnostics: diagnostics per message", payload[0], None, ""),
        ("publishDiagnostics: bytes per diagnostic", payload[1] / max(1, payload[0]), None, "B"),
        ("cold start to first diagnostics (ms)", cold, TARGETS["cold_start"], "ms"),
        ("  server CPU time up to the first diagnostics (ms)", statistics.median(start_cpu), None, "ms"),
        ("  baseline: python + import lsprotocol.types", base, None, "ms"),
        ("  cold start / baseline", cold / base, None, "x"),
        ("server RSS, no document (MiB)", statistics.median(r["rss_idle"] for r in runs), None, "MB"),
        (f"server RSS, {args.lines:,}-line file open (MiB)", statistics.median(r["rss_end"] for r in runs), None, "MB"),
    ]
    report(rows)
    last = runs[-1]
    print(f"(per run: hovers: {len(last['hover_server'])}, "
          + ", ".join(f"{kind} edits: {len(last[kind])}" for kind in dict.fromkeys(KINDS))
          + f"; load average {os.getloadavg()[0]:.2f} at the end: wall times on a shared machine stretch with it, "
            "CPU times much less)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

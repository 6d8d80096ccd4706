"""whitebox.Explainer: exact attributions of a live PyTorch classifier.

The module's weights go into a temporary .safetensors file, the module
itself is run on a few probe inputs to record its logits, and `whitebox
serve -head auto -verify` is started on them: the server refuses to start
unless one of its heads reproduces the module's logits, so what is
attributed is proved to be the module. Requests then go to that server
over loopback; each record is the one `whitebox attribute -format json`
writes for the same file and options (Explainer.command()).
"""

import atexit
import http.client
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import weakref

import torch
from torch import nn

from ._binary import WhiteboxError, find_binary
from ._safetensors import write as write_safetensors


class VerificationError(WhiteboxError):
    """The module's forward is not one whitebox computes: no head of an
    Embedding -> LSTM/GRU -> head -> classifier stack reproduces its logits
    on the probes (the message names the worst probe and difference)."""


class ServerError(WhiteboxError):
    """A request the server refused or failed, with its message and status."""

    def __init__(self, status, message):
        super().__init__("%d: %s" % (status, message))
        self.status, self.message = status, message


# Containers and parameterless layers may wrap the layers whitebox reads;
# anything else with parameters is refused by name.
_READ = (nn.Embedding, nn.LSTM, nn.GRU, nn.Linear)
_FREE = (nn.Sequential, nn.ModuleList, nn.ModuleDict, nn.ReLU, nn.Tanh, nn.Dropout, nn.Identity)
_SHAPE = ("a classifier must be Embedding -> LSTM/GRU -> head (hn, last, mean, max, attention) -> "
          "Linear (or Linear -> ReLU/Tanh -> Linear)")


def _check_structure(module):
    """The module's Embedding and recurrent layer (with their names);
    refuses what whitebox cannot read, naming the part."""
    embeddings, recurrent = [], []
    for name, m in module.named_modules():
        label = "%s (%s)" % (name or "the module", type(m).__name__)
        if isinstance(m, nn.Embedding):
            if m.max_norm is not None:
                raise WhiteboxError("%s: max_norm renormalizes the embedding's rows in the forward pass; "
                                    "whitebox reads the rows as they are" % label)
            embeddings.append((name, m))
        elif isinstance(m, (nn.LSTM, nn.GRU)):
            if getattr(m, "proj_size", 0):
                raise WhiteboxError("%s: proj_size=%d: whitebox reads LSTMs without projections" % (label, m.proj_size))
            recurrent.append((name, m))
        elif isinstance(m, nn.RNNBase):
            raise WhiteboxError("%s: whitebox reads nn.LSTM and nn.GRU layers, not %s" % (label, type(m).__name__))
        elif not isinstance(m, _READ + _FREE) and any(True for _ in m.parameters(recurse=False)):
            names = ", ".join(n for n, _ in m.named_parameters(recurse=False))
            raise WhiteboxError("%s holds parameters whitebox does not read (%s): %s" % (label, names, _SHAPE))
    if len(embeddings) != 1:
        raise WhiteboxError("the module has %d nn.Embedding layers (%s); whitebox reads one" %
                            (len(embeddings), ", ".join(n for n, _ in embeddings) or "none"))
    if len(recurrent) != 1:
        raise WhiteboxError("the module has %d nn.LSTM/nn.GRU layers (%s); whitebox reads one (with num_layers for a stack)" %
                            (len(recurrent), ", ".join(n for n, _ in recurrent) or "none"))
    return embeddings[0], recurrent[0]


def default_probe(vocab, lengths=(1, 3, 7, 12), seed=0):
    """A few id sequences of the given lengths, random but the same each time."""
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(0, vocab, (n,), generator=g).tolist() for n in lengths]


def _logits_of(out, where):
    """The logits tensor of a forward's output (a tensor, or a tuple whose
    first element is the logits, as attention models often return)."""
    if isinstance(out, (tuple, list)) and out and isinstance(out[0], torch.Tensor):
        out = out[0]
    if not isinstance(out, torch.Tensor) or not out.dtype.is_floating_point:
        raise WhiteboxError("%s: the module returned %s, not a tensor of logits" % (where, type(out).__name__))
    return out


def _fingerprint(module):
    """What changes when the module's function may change: its tensors'
    identities, storage and in-place versions, and its modes."""
    return (tuple((id(t), t.data_ptr(), t._version) for t in module.state_dict(keep_vars=True).values()),
            tuple(m.training for m in module.modules()))


def _record_probe(module, probe, emb, linears, path):
    """Runs the module on the probe (as it is held: its mode, its device),
    writes the verify file, and returns the Linear layers in the order a
    forward pass on the longest probe called them, each with the number
    of positions it ran on (the input's size without its last axis), and
    that probe's length."""
    device = emb.weight.device
    longest = max(range(len(probe)), key=lambda n: len(probe[n]))
    calls = []

    def hook(mod, inp, out, name):
        if recording[0] and inp and isinstance(inp[0], torch.Tensor) and inp[0].dim() >= 1:
            calls.append((name, inp[0].numel() // max(1, inp[0].shape[-1])))

    recording = [False]
    hooks = [m.register_forward_hook(lambda mod, inp, out, name=name: hook(mod, inp, out, name)) for name, m in linears]
    try:
        with open(path, "w") as f, torch.no_grad():
            for n, ids in enumerate(probe):
                if not ids:
                    raise ValueError("probe %d is empty" % n)
                recording[0] = n == longest
                logits = _logits_of(module(torch.tensor([ids], device=device)), "probe %d" % n)
                if logits.dim() != 2 or logits.shape[0] != 1:
                    raise WhiteboxError("probe %d: the module's output has shape %s for ids of shape (1, %d); whitebox "
                                        "reads classifiers whose forward maps (batch, tokens) to (batch, classes)" %
                                        (n, tuple(logits.shape), len(ids)))
                f.write(json.dumps({"ids": ids, "logits": [float(v) for v in logits.reshape(-1).tolist()]}) + "\n")
    finally:
        for h in hooks:
            h.remove()
    seen, order = set(), []
    for name, positions in calls:
        if name in seen:
            raise WhiteboxError("%s (Linear) is called more than once in a forward pass: %s" % (name, _SHAPE))
        seen.add(name)
        order.append((name, positions))
    return order, len(probe[longest])


def _roles(order, steps, modules, hidden):
    """The attention score's Linear layers and the classifier's, from the
    calls of a forward pass on `steps` tokens: Linear layers that run at
    every step (on the recurrent outputs) and end in one unit are the
    attention score, those on one pooled vector the classifier."""
    if steps > 1:
        seq = [n for n, p in order if p == steps]
        pooled = [n for n, p in order if p != steps]
    else:  # one-token probes: by the order of the calls, a score ending in one unit first
        names, seq = [n for n, _ in order], []
        for k in (2, 1):
            if len(names) > k and modules[names[k - 1]].out_features == 1 and modules[names[0]].in_features == hidden:
                seq = names[:k]
                break
        pooled = names[len(seq):]
    if not pooled:  # e.g. the classifier applied to every step, then one step taken
        pooled, seq = seq, []
    if seq and modules[seq[-1]].out_features != 1:
        raise WhiteboxError("%s (Linear) runs on the recurrent outputs step by step but is not an attention score "
                            "(one unit): %s" % (", ".join(seq), _SHAPE))
    if len(seq) > 2:
        raise WhiteboxError("the attention score has %d Linear layers (%s); whitebox reads one, or two around a Tanh"
                            % (len(seq), ", ".join(seq)))
    if not 1 <= len(pooled) <= 2:
        raise WhiteboxError("the classifier has %d Linear layers (%s): %s" % (len(pooled), ", ".join(pooled) or "none", _SHAPE))
    if modules[pooled[0]].in_features != hidden:
        raise WhiteboxError("%s (Linear) takes %d features; the recurrent layer's head gives %d: %s" %
                            (pooled[0], modules[pooled[0]].in_features, hidden, _SHAPE))
    return seq, pooled


def _canonical(emb, rnn, seq, pooled, modules):
    """The module's tensors under the names whitebox's importer knows, and
    the importer's name options for them."""
    tensors = {"embedding.weight": emb.weight}
    for n, p in rnn.named_parameters():
        tensors["rnn." + n] = p

    def put(prefix, names):
        for i, name in enumerate(names):
            p = prefix if len(names) == 1 else "%s.%d" % (prefix, 2 * i)
            for k, t in modules[name].named_parameters():
                tensors["%s.%s" % (p, k)] = t

    put("attention", seq)
    put("classifier", pooled)
    names = {"embedding": "embedding", "lstm": "rnn", "decoder": "classifier" if len(pooled) == 1 else "classifier.0"}
    if seq:
        names["attention"] = "attention"
    return tensors, names


def _rows(ids):
    """ids as a list of id lists, and whether the caller gave a batch."""
    if isinstance(ids, torch.Tensor):
        if ids.dtype.is_floating_point or ids.dtype == torch.bool:
            raise TypeError("ids must be integer token ids, not %s" % ids.dtype)
        if ids.dim() == 1:
            return [ids.tolist()], False
        if ids.dim() == 2:
            return ids.tolist(), True
        raise ValueError("ids must be 1-D (tokens) or 2-D (batch, tokens), not %d-D" % ids.dim())
    ids = list(ids)
    first = ids[0] if ids else None
    if (isinstance(first, torch.Tensor) and first.dim() > 0) or (
            not isinstance(first, (str, torch.Tensor)) and hasattr(first, "__len__")):
        return [[int(v) for v in (row.reshape(-1).tolist() if isinstance(row, torch.Tensor) else row)] for row in ids], True
    return [[int(v) for v in ids]], False


def _targets(target, n):
    """target as one class for every row (None, a name, an index, "all")
    or a list of n, one per row."""
    if isinstance(target, torch.Tensor):
        target = target.item() if target.dim() == 0 else target.reshape(-1).tolist()
    elif hasattr(target, "tolist") and not isinstance(target, str):  # numpy
        target = target.tolist()
    if isinstance(target, (list, tuple)):
        if len(target) != n:
            raise ValueError("%d targets for %d rows" % (len(target), n))
        return [None if t is None else str(int(t) if not isinstance(t, str) else t) for t in target]
    if target is None:
        return None
    if isinstance(target, bool):
        raise TypeError("target must be a class index or name, not a bool")
    return str(int(target) if not isinstance(target, str) else target)


def _stop(proc, tmp):
    """Ends a server process (closing its standard input shuts it down;
    then a signal, then a kill) and removes its files."""
    try:
        if proc.poll() is None:
            try:
                proc.stdin.close()  # -stdin-eof: the server shuts down
            except OSError:
                pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if proc.stdin and not proc.stdin.closed:
            proc.stdin.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _drain(stream):
    with stream:
        for _ in stream:
            pass


class Explainer:
    """Attributions of `module`, an nn.Module whose forward maps token ids
    (batch, tokens) to logits (batch, classes) through one nn.Embedding,
    one nn.LSTM or nn.GRU (stacked, bidirectional, batch_first or not), a
    head (h_n, the last step, the mean or max over steps, or attention
    pooling with a Linear(D, 1) or Linear -> Tanh -> Linear(A, 1) score)
    and a classifier (Linear, or Linear -> ReLU/Tanh -> Linear). The
    layers may have any names; a forward may return (logits, ...).

    classes: the classes' names, in logit order (default "0", "1", ...):
    the records' and a target's names.

    probe: id sequences the module is run on to prove that whitebox
    computes its function (default: default_probe(vocab)). The module is
    run as it is held (its mode, its device): a module left in train mode
    with dropout fails the check (VerificationError), as does any forward
    whitebox does not compute. Another part with parameters is refused
    naming it (WhiteboxError).

    One `whitebox serve` process (binary: default find_binary()) serves
    the Explainer until close() (or the end of a `with` block, garbage
    collection, the interpreter's exit); it also ends when this process
    dies (it reads its standard input). budget, workers: the server's
    -budget (e.g. "1GiB": long inputs and many classes need more) and
    -workers. timeout: seconds the server may take to start.

    The weights are read once: changing the module's parameters or mode
    afterwards makes attribute() raise rather than explain the old
    module.
    """

    def __init__(self, module, probe=None, classes=None, binary=None, timeout=120, budget=None, workers=None):
        if not isinstance(module, nn.Module):
            raise TypeError("module must be a torch.nn.Module, not %s" % type(module).__name__)
        (emb_name, emb), (rnn_name, rnn) = _check_structure(module)
        self.vocab = emb.num_embeddings
        binary = binary or find_binary()
        modules = dict(module.named_modules())
        linears = [(n, m) for n, m in modules.items() if isinstance(m, nn.Linear)]
        probe = [list(p) for p in probe] if probe is not None else default_probe(self.vocab)
        if not probe:
            raise ValueError("probe: at least one id sequence")
        self.probe = [[int(v) for v in ids] for ids in probe]
        tmp = tempfile.mkdtemp(prefix="whitebox-")
        try:
            self.path = os.path.join(tmp, "model.safetensors")
            self.verify = os.path.join(tmp, "probe.jsonl")
            order, steps = _record_probe(module, self.probe, emb, linears, self.verify)
            seq, pooled = _roles(order, steps, modules, rnn.hidden_size * (2 if rnn.bidirectional else 1))
            tensors, names = _canonical(emb, rnn, seq, pooled, modules)
            write_safetensors(self.path, tensors, {"format": "pt"})
            if classes is not None:
                classes = [str(c) for c in classes]
                if any("\n" in c or not c.strip() for c in classes):
                    raise ValueError("classes: names of one line each, not empty")
                names["classes"] = os.path.join(tmp, "classes.txt")
                with open(names["classes"], "w") as f:
                    f.write("".join(c + "\n" for c in classes))
            self._options = ["head=auto", "verify=" + self.verify] + ["%s=%s" % kv for kv in sorted(names.items())]
            self._flags = ["-head", "auto", "-verify", self.verify] + sum((["-" + k, v] for k, v in sorted(names.items())), [])
            flags = [binary, "serve", "-addr", "127.0.0.1:0", "-stdin-eof", "-timeout", "876000h",
                     "-max-instances", "1000000", "-max-body", "1TiB", "-max-tokens", "1000000",
                     "-model", "m=%s,%s" % (self.path, ",".join(self._options))]
            if budget is not None:
                flags += ["-budget", str(budget)]
            if workers is not None:
                flags += ["-workers", str(int(workers))]
            self.binary = binary
            self.proc = subprocess.Popen(flags, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE, text=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self._finalize = weakref.finalize(self, _stop, self.proc, tmp)
        atexit.register(self._finalize)
        self._module = weakref.ref(module)
        self._fingerprint = _fingerprint(module)
        self.names = {"embedding": emb_name, "recurrent": rnn_name, "attention": seq, "classifier": pooled}
        self.addr = self._await_listening(timeout, module)
        info = self._call("GET", "/v1/models/m")
        self.head, self.classes, self.layers = info["head"], info["classes"], info["layers"]

    def _await_listening(self, timeout, module):
        lines = []
        timer = threading.Timer(timeout, self.proc.kill)  # a start that hangs
        timer.start()
        try:
            for line in self.proc.stderr:
                lines.append(line.rstrip("\n"))
                if "listening on http://" in line:
                    addr = line.split("listening on http://", 1)[1].split()[0]
                    # The rest of stderr (logs) is drained so that the pipe
                    # never fills (by a function that holds no reference to
                    # self, so that garbage collection can end the server).
                    threading.Thread(target=_drain, args=(self.proc.stderr,), daemon=True).start()
                    return addr
        finally:
            timer.cancel()
        self.proc.wait()
        self.proc.stderr.close()
        msg = "\n".join(lines) or "whitebox serve exited with status %d" % self.proc.returncode
        self.close()
        if "-verify" in msg or "no head matches" in msg or "heads match" in msg:
            m = re.search(r"at line (\d+)", msg) or re.search(r"line (\d+)", msg)
            if m and 1 <= int(m.group(1)) <= len(self.probe):
                msg += "\nthe worst probe, line %s: ids %s" % (m.group(1), self.probe[int(m.group(1)) - 1])
            drop = [n or "the module" for n, x in module.named_modules() if x.training and (
                (isinstance(x, nn.modules.dropout._DropoutNd) and x.p > 0) or
                (isinstance(x, nn.RNNBase) and x.dropout > 0 and x.num_layers > 1))]
            if drop:
                msg += "\nthe module is in train mode with dropout active (%s): call module.eval()" % ", ".join(drop)
            raise VerificationError(msg)
        raise WhiteboxError(msg)

    def close(self):
        """Stops the server; the Explainer cannot be used afterwards."""
        self._finalize()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<whitebox.Explainer %s head=%s classes=%d %s>" % (
            self.layers, getattr(self, "head", "?"), len(getattr(self, "classes", [])),
            "running at " + self.addr if self._finalize.alive else "closed")

    @property
    def pid(self):
        """The server process's id."""
        return self.proc.pid

    def command(self, *args):
        """The `whitebox attribute` command line that writes, for the same
        options, the records attribute() returns (the same bytes; valid
        while the Explainer is open: the files are removed on close)."""
        return [self.binary, "attribute", "-model", self.path] + self._flags + ["-format", "json"] + list(args)

    def _check_module(self):
        if not self._finalize.alive:
            raise WhiteboxError("the Explainer is closed")
        module = self._module()
        if module is not None and _fingerprint(module) != self._fingerprint:
            raise WhiteboxError("the module's parameters or mode changed after the Explainer read them: "
                                "make a new Explainer for the module as it is now")

    def _call(self, verb, path, body=None, accept=None):
        self._check_module()
        host, port = self.addr.rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port))
        try:
            headers = {"Content-Type": "application/json"}
            if accept:
                headers["Accept"] = accept
            conn.request(verb, path, body=None if body is None else json.dumps(body), headers=headers)
            resp = conn.getresponse()
            data = resp.read().decode()
        finally:
            # Also on KeyboardInterrupt: the server sees the client gone and
            # stops the request's work.
            conn.close()
        if resp.status != 200:
            try:
                msg = json.loads(data)["error"]
            except (ValueError, KeyError, TypeError):
                msg = data.strip()
            raise ServerError(resp.status, msg)
        if accept == "application/x-ndjson":
            lines = data.splitlines()
            for line in lines:
                if line.startswith('{"error"'):  # a stream's failure, after its first records
                    rec = json.loads(line)
                    raise ServerError(rec.get("status", 500), rec["error"])
            return lines
        return json.loads(data)

    def records(self, rows, **parameters):
        """The records (JSON lines, as `whitebox attribute -format json`
        writes them) of the id sequences rows, in one request."""
        return self._call("POST", "/v1/models/m:explain",
                          {"instances": rows, "parameters": parameters}, accept="application/x-ndjson")

    def predict(self, ids):
        """whitebox's float64 logits of ids (a sequence, or a batch as in
        attribute()): a (C,) tensor, a (B, C) one, or a list for rows of
        different lengths."""
        rows, batch = _rows(ids)
        preds = self._call("POST", "/v1/models/m:predict", {"instances": rows})["predictions"]
        out = [torch.tensor([p["logits"][c] for c in self.classes], dtype=torch.float64) for p in preds]
        return (torch.stack(out) if batch else out[0]) if out else torch.zeros(0, len(self.classes), dtype=torch.float64)

    def attribute(self, ids, method="ig", target=None, return_record=False, **parameters):
        """The token scores (float64) of method (ig, saliency, gxi,
        occlusion, lrp, deeplift, cd) for ids: a list or 1-D tensor (T,)
        gives (T,); a batch, a (B, T) tensor or a list of lists (one
        request; rows of different lengths give a list of tensors), gives
        (B, T). target: None (the predicted class), a class index or name,
        one per row (a list or a tensor), or "all" (scores (C, T) per row,
        classes in the order of self.classes). parameters are the server's
        (steps, quadrature, baseline, eps, lrp_bias, features, timeout,
        ...: docs/server.md); baseline may be a token id (its embedding row
        at every position) or "zero". With return_record=True, also the
        records (dicts, as `whitebox attribute -format json` writes them:
        class, prediction, logits, delta, attention, ...)."""
        rows, batch = _rows(ids)
        if not rows:
            raise ValueError("ids: no rows")
        params = {"method": method}
        for k, v in parameters.items():
            if k == "baseline" and isinstance(v, int) and not isinstance(v, bool):
                v = "id:%d" % v
            params[k] = v
        targets = _targets(target, len(rows))
        if isinstance(targets, list):
            # One request per distinct class, the records put back in order.
            lines = [None] * len(rows)
            for t in dict.fromkeys(targets):
                idx = [i for i, u in enumerate(targets) if u == t]
                p = dict(params) if t is None else dict(params, **{"class": t})
                for i, line in zip(idx, self.records([rows[i] for i in idx], **p)):
                    lines[i] = line
        else:
            if targets is not None:
                params["class"] = targets
            lines = self.records(rows, **params)
        recs = [json.loads(line) for line in lines]
        scores = [torch.tensor(r["scores"], dtype=torch.float64) for r in recs]
        if batch:
            out = torch.stack(scores) if len({s.shape for s in scores}) == 1 else scores
        else:
            out = scores[0]
        return (out, recs) if return_record else out

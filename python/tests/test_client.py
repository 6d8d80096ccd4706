"""Tests of the Python client against float64 autograd references written
here, against the CLI's bytes, and against modules it must refuse.

Run from python/: WHITEBOX_BIN=/path/to/whitebox python3 -m unittest discover -s tests -v
(the whitebox binary: go build -o /path/to/whitebox ./cmd/whitebox)."""

import copy
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

try:
    import numpy as np
    import torch
    from torch import nn
except ImportError:  # pragma: no cover
    torch = None

if torch is not None:
    import whitebox
    from whitebox import captum

    class Classifier(nn.Module):
        """Embedding -> LSTM/GRU -> head -> Linear or Sequential classifier."""

        def __init__(self, kind="lstm", bi=False, layers=1, head="hn", classifier="linear", vocab=30, dim=6,
                     hidden=5, classes=3, seed=0):
            super().__init__()
            torch.manual_seed(seed)
            self.kind, self.bi, self.head = kind, bi, head
            self.embedding = nn.Embedding(vocab, dim)
            rnn = nn.LSTM if kind == "lstm" else nn.GRU
            self.rnn = rnn(dim, hidden, num_layers=layers, bidirectional=bi, batch_first=True)
            d = hidden * (2 if bi else 1)
            if head == "attention":
                self.attention = nn.Linear(d, 1)
            if classifier == "linear":
                self.fc = nn.Linear(d, classes)
            else:
                self.classifier = nn.Sequential(nn.Linear(d, 7), nn.Tanh() if classifier == "tanh" else nn.ReLU(),
                                                nn.Linear(7, classes))
            with torch.no_grad():
                for p in self.parameters():
                    p.mul_(2)  # livelier gates

        def from_embedded(self, e):
            out, h = self.rnn(e)
            h_n = h[0] if isinstance(h, tuple) else h
            if self.head == "hn":
                v = torch.cat((h_n[-2], h_n[-1]), dim=-1) if self.bi else h_n[-1]
            elif self.head == "last":
                v = out[:, -1]
            elif self.head == "mean":
                v = out.mean(dim=1)
            elif self.head == "max":
                v = out.max(dim=1).values
            elif self.head == "attention":
                alpha = torch.softmax(self.attention(out), dim=1)
                v = (alpha * out).sum(dim=1)
            else:
                raise ValueError(self.head)
            return self.fc(v) if hasattr(self, "fc") else self.classifier(v)

        def forward(self, ids):
            return self.from_embedded(self.embedding(ids))

    CASES = [
        dict(kind="lstm", head="hn"),
        dict(kind="lstm", bi=True, layers=2, head="max", classifier="relu"),
        dict(kind="gru", head="hn", layers=2),
        dict(kind="gru", bi=True, head="mean", classifier="tanh"),
        dict(kind="lstm", bi=True, head="attention"),
        dict(kind="gru", head="attention", classifier="relu"),
        dict(kind="lstm", bi=True, head="last", classifier="tanh"),
        dict(kind="gru", bi=True, layers=2, head="hn"),
        dict(kind="lstm", layers=2, head="last", classifier="relu"),
        dict(kind="gru", bi=True, head="max", classifier="tanh"),
    ]

    def references(module, ids, cls=None, steps=50):
        """float64 autograd: saliency, G x I and IG (Gauss-Legendre, the
        step sizes rounded to float32 as Captum does) of class cls
        (None: the predicted one) on the embedded input."""
        m = copy.deepcopy(module).double().eval()
        e = m.embedding(torch.tensor([ids])).detach()[0]
        with torch.no_grad():
            logits = m.from_embedded(e[None])[0]
        c = int(torch.argmax(logits)) if cls is None else cls
        x = e.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(m.from_embedded(x[None])[0, c], x)
        nodes, weights = np.polynomial.legendre.leggauss(steps)
        alphas = torch.tensor(0.5 * (1 + nodes), dtype=torch.float64)
        sizes = torch.tensor(0.5 * weights, dtype=torch.float64).float().double()
        scaled = (alphas.view(-1, 1, 1) * e).requires_grad_(True)
        (gs,) = torch.autograd.grad(m.from_embedded(scaled)[:, c].sum(), scaled)
        ig = ((gs * sizes.view(-1, 1, 1)).sum(0) * e).sum(1)
        return {"saliency": g.sum(1), "gxi": (g * e).sum(1), "ig": ig, "class": c}


    def generic_references(module, ids, cls=None, steps=50, rule="gausslegendre", baseline=None):
        """float64 autograd on any module, as Captum's Layer methods do it:
        the embedding's output replaced by a forward hook (so the layout,
        batch_first or not, is the module's own). baseline: None (zero)
        or a token id. IG's weights rounded to float32 as Captum's."""
        m = copy.deepcopy(module).double()
        emb = [x for x in m.modules() if isinstance(x, nn.Embedding)][0]
        ids_t = torch.tensor([ids])
        cap = []
        h = emb.register_forward_hook(lambda mod, i, o: cap.append(o.detach()))
        with torch.no_grad():
            m(ids_t)
        h.remove()
        e = cap[0]
        T, E = len(ids), emb.embedding_dim

        def F(x):  # x: (T, E)
            h = emb.register_forward_hook(lambda mod, i, o: x.reshape(e.shape))
            try:
                out = m(ids_t)
            finally:
                h.remove()
            return (out[0] if isinstance(out, tuple) else out)[0]

        x = e.reshape(T, E)
        b = torch.zeros_like(x) if baseline is None else emb.weight.detach()[baseline].expand(T, E).clone()
        with torch.no_grad():
            fx, fb = F(x), F(b)
        c = int(torch.argmax(fx)) if cls is None else cls

        def grad(point):
            point = point.clone().requires_grad_(True)
            (g,) = torch.autograd.grad(F(point)[c], point)
            return g

        g = grad(x)
        if rule == "gausslegendre":
            nodes, weights = np.polynomial.legendre.leggauss(steps)
            alphas, sizes = 0.5 * (1 + nodes), 0.5 * weights
        elif rule == "riemann_trapezoid":
            alphas = np.arange(steps) / (steps - 1)
            sizes = np.full(steps, 1 / steps)
            sizes[0] = sizes[-1] = 0.5 / steps
        sizes = torch.tensor(sizes, dtype=torch.float64).float().double()
        total = torch.zeros_like(x)
        for a, w in zip(alphas.tolist(), sizes.tolist()):
            total += w * grad(b + a * (x - b))
        occ = torch.zeros(T, dtype=torch.float64)
        with torch.no_grad():
            for t in range(T):
                xo = x.clone()
                xo[t] = b[t]
                occ[t] = fx[c] - F(xo)[c]
        return {"saliency": g.sum(1), "abs_saliency": g.abs().sum(1), "gxi": (g * x).sum(1),
                "ig": (total * (x - b)).sum(1), "occlusion": occ, "class": c, "gap": float(fx[c] - fb[c]),
                "fx": float(fx[c])}

    class OddNames(nn.Module):
        """Names whitebox's importer does not guess, a GRU with
        batch_first=False, a two-layer attention score, a two-layer
        classifier, and a forward that returns (logits, alpha)."""

        def __init__(self):
            super().__init__()
            torch.manual_seed(1)
            self.tok = nn.Embedding(20, 5, padding_idx=0)
            self.encoder = nn.GRU(5, 4, num_layers=2, bidirectional=True)
            self.scorer = nn.Sequential(nn.Linear(8, 6), nn.Tanh(), nn.Linear(6, 1))
            self.head = nn.Sequential(nn.Linear(8, 5), nn.ReLU(), nn.Linear(5, 4))

        def forward(self, ids):
            out, _ = self.encoder(self.tok(ids.t()))  # (T, B, 2H)
            alpha = torch.softmax(self.scorer(out), dim=0)
            return self.head((alpha * out).sum(0)), alpha[..., 0].t()

    class BackwardFirst(nn.Module):
        """A bidirectional LSTM read as cat(h_n[-1], h_n[-2]) (hn-bf), the
        classifier called out."""

        def __init__(self):
            super().__init__()
            torch.manual_seed(2)
            self.words = nn.Embedding(15, 4)
            self.recurrent = nn.LSTM(4, 3, batch_first=True, bidirectional=True)
            self.out = nn.Linear(6, 2)

        def forward(self, ids):
            _, (h, _) = self.recurrent(self.words(ids))
            return self.out(torch.cat((h[-1], h[-2]), dim=-1))

    class BmmAttention(nn.Module):
        """Attention as torch.bmm writes it: the classifier, too, runs on a
        3-D tensor (batch, 1, D)."""

        def __init__(self):
            super().__init__()
            torch.manual_seed(4)
            self.embedding = nn.Embedding(16, 4)
            self.lstm = nn.LSTM(4, 3, batch_first=True)
            self.att_score = nn.Linear(3, 1, bias=False)
            self.fc = nn.Linear(3, 2)

        def forward(self, ids):
            out, _ = self.lstm(self.embedding(ids))
            alpha = torch.softmax(self.att_score(out), dim=1)  # (B, T, 1)
            return self.fc(torch.bmm(alpha.transpose(1, 2), out)).squeeze(1)

    class StepwiseLast(nn.Module):
        """The classifier applied to every step, then the last step taken:
        the head `last`."""

        def __init__(self):
            super().__init__()
            torch.manual_seed(3)
            self.e = nn.Embedding(12, 4)
            self.lstm = nn.LSTM(4, 3, batch_first=True)
            self.proj = nn.Linear(3, 3)

        def forward(self, ids):
            out, _ = self.lstm(self.e(ids))
            return self.proj(out)[:, -1]


WORST = [0.0]  # the largest relative difference from a float64 autograd reference seen


def close(a, b, rel=1e-8):
    """max |a - b| <= rel * max(1, max |b|)."""
    scale = max(1.0, float(b.abs().max()))
    d = float((a - b).abs().max()) / scale
    WORST[0] = max(WORST[0], d)
    return d <= rel


def tearDownModule():
    print("\nlargest relative difference from float64 autograd in these tests: %.3g" % WORST[0], file=sys.stderr)


@unittest.skipIf(torch is None, "PyTorch is not installed")
class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        try:
            cls.binary = whitebox.find_binary()
        except whitebox.WhiteboxError as e:
            raise unittest.SkipTest(str(e))

    def test_methods_equal_autograd_and_cli(self):
        inputs = [[3, 14, 15, 9, 2], [7], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]]
        worst = 0.0
        for case in CASES:
            module = Classifier(**case).eval()
            with self.subTest(**case), whitebox.Explainer(module) as ex:
                want = {case["head"]}
                if case["head"] == "last" and not case.get("bi"):
                    want.add("hn")  # one function, h_n[-1] is the last output: whitebox names it hn
                self.assertIn(ex.head.split("+")[0], want)  # "mean+tanh": the classifier's activation
                for ids in inputs:
                    ref = references(module, ids)
                    for method in ("saliency", "gxi", "ig"):
                        got, recs = ex.attribute(ids, method=method, return_record=True)
                        self.assertEqual(recs[0]["class"], str(ref["class"]))
                        self.assertTrue(close(got, ref[method]), (method, ids, got, ref[method]))
                        worst = max(worst, float((got - ref[method]).abs().max()))
                        # The CLI on the same file: the same record, to the byte.
                        line = ex.records([ids], method=method)[0]
                        cli = subprocess.run(ex.command("-method", method, " ".join(map(str, ids))),
                                             capture_output=True, text=True, check=True).stdout
                        self.assertEqual(line + "\n", cli)
                    if case["head"] == "attention":
                        _, recs = ex.attribute(ids, method="lrp", return_record=True)
                        m = copy.deepcopy(module).double()
                        with torch.no_grad():
                            out, _ = m.rnn(m.embedding(torch.tensor([ids])))
                            alpha = torch.softmax(m.attention(out), dim=1)[0, :, 0]
                        self.assertTrue(close(torch.tensor(recs[0]["attention"], dtype=torch.float64), alpha))
        print("\nlargest difference from float64 autograd: %.3g" % worst, file=sys.stderr)

    def test_batches_targets_and_captum(self):
        module = Classifier(kind="gru", bi=True, head="mean").eval()
        ids = torch.tensor([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])
        with whitebox.Explainer(module) as ex:
            batch = ex.attribute(ids, method="gxi", target=1)
            self.assertEqual(tuple(batch.shape), (2, 5))
            for b in range(2):
                self.assertTrue(close(batch[b], references(module, ids[b].tolist(), cls=1)["gxi"]))
            per_row = ex.attribute(ids, method="saliency", target=[0, 2])
            for b, c in enumerate([0, 2]):
                self.assertTrue(close(per_row[b], references(module, ids[b].tolist(), cls=c)["saliency"]))
            every = ex.attribute(ids[0], method="saliency", target="all")
            self.assertEqual(tuple(every.shape), (3, 5))
            for c in range(3):
                self.assertTrue(close(every[c], references(module, ids[0].tolist(), cls=c)["saliency"]))
            ragged = ex.attribute([[1, 2], [3, 4, 5]], method="gxi")
            self.assertEqual([tuple(r.shape) for r in ragged], [(2,), (3,)])
        ig = captum.IntegratedGradients(module).attribute(ids, target=2, n_steps=50)
        for b in range(2):
            self.assertTrue(close(ig[b], references(module, ids[b].tolist(), cls=2)["ig"]))
        sal = captum.Saliency(module).attribute(ids, target=0, abs=False)
        self.assertTrue(close(sal[0], references(module, ids[0].tolist(), cls=0)["saliency"]))
        dl = captum.DeepLift(module).attribute(ids)
        self.assertEqual(tuple(dl.shape), (2, 5))

    def test_any_names_layouts_and_dtypes(self):
        """Layers named anyhow, batch_first=False, float64 weights, a
        forward returning (logits, alpha), the hn-bf head, a classifier
        applied step by step: autograd, and the CLI's bytes."""
        inputs = [[3, 14, 15, 9, 2], [7, 1]]
        for make, dtype, head in ((OddNames, torch.float64, "attention"), (BackwardFirst, torch.float32, "hn-bf"),
                                  (StepwiseLast, torch.float32, "hn"), (BmmAttention, torch.float32, "attention")):
            module = make().to(dtype).eval()
            with self.subTest(module=make.__name__), whitebox.Explainer(module) as ex:
                self.assertEqual(ex.head.split("+")[0], head)  # hn and last: one function one way
                with open(ex.path, "rb") as f:  # the weights as the module holds them
                    self.assertIn(b'"F64"' if dtype == torch.float64 else b'"F32"', f.read(4096))
                for ids in inputs:
                    ids = [v % module.state_dict()[next(iter(module.state_dict()))].shape[0] for v in ids]
                    ref = generic_references(module, ids, steps=16)
                    for method in ("saliency", "gxi", "ig"):
                        got, recs = ex.attribute(ids, method=method, steps=16, return_record=True)
                        self.assertTrue(close(got, ref[method]), (method, ids, got, ref[method]))
                        line = ex.records([ids], method=method, steps=16)[0]
                        cli = subprocess.run(ex.command("-method", method, "-steps", "16", " ".join(map(str, ids))),
                                             capture_output=True, text=True, check=True).stdout
                        self.assertEqual(line + "\n", cli)
                    logits = ex.predict(ids)
                    with torch.no_grad():
                        out = copy.deepcopy(module).double()(torch.tensor([ids]))
                    self.assertTrue(close(logits, (out[0] if isinstance(out, tuple) else out)[0]))

    def test_captum_facade(self):
        module = Classifier(kind="lstm", bi=True, head="attention", classifier="relu").eval()
        ids = torch.tensor([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])
        rows = ids.tolist()

        def refs(**kw):
            return [generic_references(module, r, **kw) for r in rows]

        def check(got, want, key):
            self.assertEqual(tuple(got.shape), (2, 5))
            for b in range(2):
                self.assertTrue(close(got[b], want[b][key]), (key, got[b], want[b][key]))

        r2 = refs(cls=2, baseline=4, steps=20)
        ig = captum.IntegratedGradients(module)
        check(ig.attribute(ids, baselines=4, target=2, n_steps=20), r2, "ig")
        out, delta = ig.attribute(ids, baselines=torch.full_like(ids, 4), target=2, n_steps=20,
                                  return_convergence_delta=True)
        check(out, r2, "ig")
        for b in range(2):
            self.assertAlmostEqual(float(delta[b]), float(out[b].sum()) - r2[b]["gap"], delta=1e-12)
        trap = refs(cls=1, rule="riemann_trapezoid", steps=12)
        check(ig.attribute(ids, target=torch.tensor([1, 1]), n_steps=12, method="riemann_trapezoid"), trap, "ig")
        # Captum's LayerIntegratedGradients(model, model.embedding): its default baseline is token 0.
        lig = captum.LayerIntegratedGradients(module, module.embedding)
        check(lig.attribute(ids, baselines=0, target=0, n_steps=20), refs(cls=0, baseline=0, steps=20), "ig")
        r0 = refs(cls=0)
        check(captum.Saliency(module).attribute(ids, target=0), r0, "abs_saliency")
        check(captum.Saliency(module).attribute(ids, target=0, abs=False), r0, "saliency")
        check(captum.InputXGradient(module).attribute(ids, target=0), r0, "gxi")
        (t,) = captum.InputXGradient(module).attribute((ids,), target=0)  # a tuple in, a tuple out
        check(t, r0, "gxi")
        occ = captum.Occlusion(module).attribute(ids, sliding_window_shapes=(1, 6), baselines=3, target=1)
        check(occ, refs(cls=1, baseline=3, steps=2), "occlusion")
        with self.assertRaises(ValueError):
            captum.Occlusion(module).attribute(ids, sliding_window_shapes=(2, 6))
        dl, delta = captum.DeepLift(module).attribute(ids, baselines=2, target=1, return_convergence_delta=True)
        rd = refs(cls=1, baseline=2, steps=2)
        for b in range(2):  # DeepLIFT's scores sum to f(x) - f(baseline)
            self.assertAlmostEqual(float(dl[b].sum()), rd[b]["gap"], delta=1e-10)
            self.assertAlmostEqual(float(delta[b]), float(dl[b].sum()) - rd[b]["gap"], delta=1e-12)
        lrp, delta = captum.LRP(module).attribute(ids, target=1, return_convergence_delta=True)
        for b in range(2):
            self.assertAlmostEqual(float(delta[b]), float(lrp[b].sum()) - rd[b]["fx"], delta=1e-9)
        with self.assertRaises(ValueError):
            ig.attribute(ids, baselines=torch.tensor([[1, 2, 3, 4, 5], [1, 2, 3, 4, 5]]))
        with self.assertRaises(ValueError):
            captum.IntegratedGradients(module, nn.Linear(2, 2))

    def test_a_changed_module_is_not_explained_as_the_old_one(self):
        module = Classifier(kind="gru", head="max").eval()
        with whitebox.Explainer(module) as ex:
            ex.attribute([1, 2, 3], method="gxi")
            with torch.no_grad():
                module.fc.weight.mul_(3)
            with self.assertRaises(whitebox.WhiteboxError) as cm:
                ex.attribute([1, 2, 3], method="gxi")
            self.assertIn("changed", str(cm.exception))
        sal = captum.InputXGradient(module)
        before = sal.attribute(torch.tensor([[1, 2, 3]]), target=1)
        pid = captum.explainer(module).pid
        with torch.no_grad():
            module.fc.weight.mul_(3)
        after = sal.attribute(torch.tensor([[1, 2, 3]]), target=1)
        self.assertNotEqual(captum.explainer(module).pid, pid)  # a new server for the module as it is
        self.assertTrue(close(after[0], generic_references(module, [1, 2, 3], cls=1, steps=2)["gxi"]))
        self.assertGreater(float((after - before).abs().max()), 1e-6)
        with self.assertRaises(ProcessLookupError):
            os.kill(pid, 0)

    def test_refusals(self):
        class Scaled(Classifier):
            def forward(self, ids):
                return 2 * super().forward(ids)

        with self.assertRaises(whitebox.VerificationError) as cm:
            whitebox.Explainer(Scaled().eval())
        self.assertIn("line", str(cm.exception))  # the worst probe line, by number

        class Dropout(Classifier):
            def __init__(self):
                super().__init__(kind="lstm", head="mean")
                self.drop = nn.Dropout(0.5)

            def forward(self, ids):
                return self.from_embedded(self.drop(self.embedding(ids)))

        with self.assertRaises(whitebox.VerificationError) as cm:
            whitebox.Explainer(Dropout().train())  # dropout on in train mode
        self.assertIn("train mode with dropout active (drop)", str(cm.exception))
        self.assertIn("the worst probe, line", str(cm.exception))
        whitebox.Explainer(Dropout().eval()).close()  # the same module in eval mode is read

        class Norm(Classifier):
            def __init__(self):
                super().__init__()
                self.norm = nn.LayerNorm(5)

        with self.assertRaises(whitebox.WhiteboxError) as cm:
            whitebox.Explainer(Norm())
        self.assertIn("norm (LayerNorm)", str(cm.exception))

        class ThreeLinear(Classifier):
            def __init__(self):
                super().__init__(classifier="relu")
                self.extra = nn.Linear(3, 3)

            def forward(self, ids):
                return self.extra(super().forward(ids))

        with self.assertRaises(whitebox.WhiteboxError) as cm:
            whitebox.Explainer(ThreeLinear().eval())
        self.assertIn("classifier.0, classifier.2, extra", str(cm.exception))

        class Conv(Classifier):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv1d(6, 6, 3)

        with self.assertRaises(whitebox.WhiteboxError) as cm:
            whitebox.Explainer(Conv())
        self.assertIn("conv (Conv1d)", str(cm.exception))

        module = Classifier().eval()
        with whitebox.Explainer(module) as ex:
            with self.assertRaises(whitebox.ServerError) as cm:
                ex.attribute([3, 99], method="ig")  # 99 is past the vocabulary
            self.assertEqual(cm.exception.status, 400)
            with self.assertRaises(whitebox.ServerError):
                ex.attribute([3, 4], method="nonsense")

    def test_no_process_outlives_its_explainer(self):
        ex = whitebox.Explainer(Classifier().eval())
        pid = ex.pid
        os.kill(pid, 0)  # running
        ex.close()
        with self.assertRaises(ProcessLookupError):
            os.kill(pid, 0)
        with self.assertRaises(whitebox.WhiteboxError):
            ex.attribute([1, 2])
        # Garbage collection ends it too.
        ex = whitebox.Explainer(Classifier().eval())
        pid = ex.pid
        del ex
        import gc
        gc.collect()
        with self.assertRaises(ProcessLookupError):
            os.kill(pid, 0)

    def test_keyboard_interrupt_cancels_the_request(self):
        """Ctrl-C during a long request: the client closes its connection
        and the server stops the work (no request left in flight)."""
        import http.client
        import signal
        import time

        def in_flight(ex):
            host, port = ex.addr.rsplit(":", 1)
            conn = http.client.HTTPConnection(host, int(port))
            conn.request("GET", "/metrics")
            text = conn.getresponse().read().decode()
            conn.close()
            return [float(l.split()[-1]) for l in text.splitlines() if l.startswith("whitebox_requests_in_flight")][0]

        seen = []

        def interrupt(signum, frame):
            seen.append(in_flight(ex))  # the request, running
            raise KeyboardInterrupt

        module = Classifier(kind="lstm", head="mean", dim=16, hidden=32).eval()
        with whitebox.Explainer(module) as ex:
            ids = torch.randint(0, 30, (1000,), generator=torch.Generator().manual_seed(0)).tolist()
            old = signal.signal(signal.SIGALRM, interrupt)
            try:
                signal.setitimer(signal.ITIMER_REAL, 0.5)
                t0 = time.time()
                with self.assertRaises(KeyboardInterrupt):
                    ex.attribute(ids, method="ig", steps=4096)  # several seconds of work
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, old)
            self.assertLess(time.time() - t0, 2)
            self.assertEqual(seen, [1])
            deadline = time.time() + 5
            while in_flight(ex) > 0 and time.time() < deadline:
                time.sleep(0.05)
            self.assertEqual(in_flight(ex), 0)
            self.assertLess(time.time() - t0, 5)
            self.assertEqual(tuple(ex.attribute(ids[:3], method="gxi").shape), (3,))  # still serving

    def test_killed_parent_leaves_no_server(self):
        """A Python process killed with SIGKILL (no finalizer runs): its
        server sees its standard input end and stops."""
        import signal
        import time
        here = os.path.dirname(os.path.abspath(__file__))
        code = ("import sys, time, torch; sys.path.insert(0, %r); sys.path.insert(0, %r)\n"
                "import whitebox, test_client\n"
                "ex = whitebox.Explainer(test_client.Classifier().eval())\n"
                "print(ex.pid, flush=True)\n"
                "time.sleep(60)\n") % (os.path.join(here, ".."), here)
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        try:
            pid = int(child.stdout.readline())
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
            child.stdout.close()
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            # An orphan is reaped by init; until then it may be a zombie.
            try:
                with open("/proc/%d/stat" % pid) as f:
                    if f.read().split()[2] == "Z":
                        return
            except OSError:
                return
            time.sleep(0.05)
        self.fail("the server %d outlived its killed parent" % pid)

    def test_export_generate_evaluate(self):
        """A white-box network as a module: whitebox reproduces it (the
        Explainer's verification), its IG is the CLI's -net one, and
        evaluate() scores any tool's scores against the ground truth."""
        net = whitebox.export("sp-fsa")
        self.assertEqual((net.vocab, net.classes), (["a", "b", "c", "d"], ["False", "True"]))
        gen = whitebox.generate("sp-fsa", n=12, length="4..10", seed=3)
        self.assertEqual(gen, subprocess.run([self.binary, "generate", "-net", "sp-fsa", "-n", "12", "-len", "4..10",
                                              "-seed", "3"], capture_output=True, text=True, check=True).stdout.split())
        out = subprocess.run([self.binary, "attribute", "-net", "sp-fsa", "-method", "ig"] + gen,
                             capture_output=True, text=True, check=True).stdout
        cli = [json.loads(line) for line in out.splitlines()]
        with whitebox.Explainer(net, classes=net.classes) as ex:
            self.assertEqual(ex.classes, ["False", "True"])
            for text, rec in zip(gen, cli):
                got = ex.attribute(net.encode(text), method="ig", captum_weights=False)
                want = torch.tensor(rec["scores"], dtype=torch.float64)
                self.assertLessEqual(float((got - want).abs().max()), 1e-12 * max(1, float(want.abs().max())), (text, got, rec))
                with torch.no_grad():
                    logits = net(net.encode(text)[None])[0]
                # PyTorch's float64 LSTM on the saturated gates (m = 50): not to the bit.
                self.assertLess(float((logits - torch.tensor([rec["logits"][c] for c in net.classes])).abs().max()), 1e-6)
                self.assertEqual(ex.records([net.encode(text).tolist()], method="ig", captum_weights=False,
                                            **{"class": rec["class"]})[0].count('"class":"%s"' % rec["class"]), 1)
        scores = [torch.tensor(r["scores"], dtype=torch.float64) for r in cli]
        report = whitebox.evaluate("sp-fsa", gen, scores, method="mine")
        self.assertEqual([s["method"] for s in report["sources"]], ["mine"])
        self.assertEqual(report["sources"][0]["inputs"] + report["sources"][0]["skipped"], 12)
        ours = subprocess.run([self.binary, "evaluate", "-net", "sp-fsa", "-scores", "-", "-format", "json"],
                              input=out, capture_output=True, text=True, check=True).stdout
        want = json.loads(ours)["sources"][0]
        want["method"] = "mine"
        self.assertEqual(report["sources"][0], want)
        with self.assertRaises(whitebox.WhiteboxError):
            whitebox.evaluate("sp-fsa", gen[:1], [[1.0]])  # one score for a longer input

@unittest.skipIf(torch is None, "PyTorch is not installed")
class DocTest(unittest.TestCase):
    def test_docs_python_example_runs_as_written(self):
        """docs/python.md's notebook example, run as it is written."""
        try:
            whitebox.find_binary()
        except whitebox.WhiteboxError as e:
            raise unittest.SkipTest(str(e))
        doc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "python.md")
        with open(doc) as f:
            text = f.read()
        env = {}
        for code in [part.split("```", 1)[0] for part in text.split("```python\n")[1:]]:  # in order, one namespace
            exec(compile(code, doc, "exec"), env)
        self.assertEqual(env["report"]["sources"][0]["method"], "lrp")
        self.assertEqual(env["report"]["sources"][0]["inputs"] + env["report"]["sources"][0]["skipped"], 20)
        self.assertEqual(tuple(env["ig"].shape), (1, 3))
        self.assertEqual(tuple(env["batch"].shape), (2, 3, 3))
        self.assertEqual(len(env["records"][0]["attention"]), 3)

    def test_readme_python_example_runs_as_written(self):
        """The README's explain.py (with its my_model.py) prints what the
        README shows."""
        import re
        import tempfile
        try:
            whitebox.find_binary()
        except whitebox.WhiteboxError as e:
            raise unittest.SkipTest(str(e))
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "..", "..", "README.md")) as f:
            text = f.read()
        blocks = re.findall(r"```(\w*)\n(.*?)```", text, re.S)
        programs = {m.group(1): body for lang, body in blocks if lang == "python"
                    for m in [re.match(r"# (\w+\.py):", body)] if m}
        shown = [body for lang, body in blocks if lang == "" and body.startswith("$ python3 explain.py ")]
        self.assertEqual(len(shown), 1)
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("my_model.py", "explain.py"):
                with open(os.path.join(tmp, name), "w") as f:
                    f.write(programs[name])
            env = dict(os.environ, PYTHONPATH=os.path.join(here, ".."))
            out = subprocess.run([sys.executable, "explain.py"], cwd=tmp, env=env, capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout, shown[0].split("\n", 1)[1])


if __name__ == "__main__":
    unittest.main()

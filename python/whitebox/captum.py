"""Captum-shaped attributions computed by whitebox.

Each class takes the module (token ids -> logits) and, optionally, its
embedding layer (the Layer* classes of Captum take it; it must be the
module's nn.Embedding), and returns from attribute(inputs, target=...)
what Captum's method on the module's embedding returns summed over the
embedding dimension: one float64 score per token, shape (B, T) for ids
(B, T) (a tuple in, a tuple out, as Captum does).

The differences from Captum, in every class:

- the computation is exact float64 on the module's weights, by
  whitebox's engine, after whitebox has reproduced the module's own
  logits on probe inputs (whitebox.Explainer; one server process per
  module, kept while the module lives and restarted when its parameters
  or mode change);
- target None is the predicted class of each row (Captum requires one
  for a classifier); an int, a class name, a list or a 1-D tensor (one
  per row) are accepted;
- baselines (IG, DeepLift, Occlusion) are one row for every position:
  None or 0.0 or a float tensor of zeros is the zero embedding; an int N,
  or an integer tensor holding N everywhere (Captum's Layer* baselines,
  e.g. torch.full_like(ids, pad_id)), is token N's embedding row. Note
  that LayerIntegratedGradients' own default (baselines=None) is token 0
  at every position: pass baselines=0 for it;
- additional_forward_args are refused: the module's forward takes the ids.
"""

import weakref

import torch

from .explainer import Explainer, _fingerprint, _rows

_explainers = weakref.WeakKeyDictionary()


def explainer(module):
    """The Explainer the classes use for module (made on first use, made
    again when the module's parameters or mode have changed)."""
    ex = _explainers.get(module)
    if ex is not None and (not ex._finalize.alive or ex._fingerprint != _fingerprint(module)):
        ex.close()
        ex = None
    if ex is None:
        ex = _explainers[module] = Explainer(module)
    return ex


def _is_zero_float(b):
    return isinstance(b, float) and b == 0.0


def _baseline(baselines):
    """The server's baseline parameter for Captum's baselines argument."""
    if isinstance(baselines, tuple):
        if len(baselines) != 1:
            raise ValueError("baselines: one for the one input, not %d" % len(baselines))
        baselines = baselines[0]
    if baselines is None or _is_zero_float(baselines):
        return {}
    if isinstance(baselines, int) and not isinstance(baselines, bool):
        return {"baseline": "id:%d" % baselines}
    if isinstance(baselines, torch.Tensor):
        if baselines.numel() == 0:
            raise ValueError("baselines: an empty tensor")
        flat = baselines.reshape(-1)
        if baselines.dtype.is_floating_point:
            if bool((flat == 0).all()):
                return {}
            raise ValueError("baselines: a float tensor must be zeros (the zero embedding); for a token's row "
                             "pass its id (an int, or an integer tensor of that id at every position)")
        if bool((flat == flat[0]).all()):
            return {"baseline": "id:%d" % int(flat[0])}
        raise ValueError("baselines: whitebox takes one token id at every position (e.g. torch.full_like(ids, pad_id)), "
                         "not different ids")
    raise ValueError("baselines: None or 0.0 (the zero embedding), or a token id (an int, or an integer tensor of "
                     "that id at every position), not %r" % (baselines,))


class _Method:
    method = None

    def __init__(self, forward_func, layer=None, multiply_by_inputs=True):
        if layer is not None:
            emb = [m for m in forward_func.modules() if isinstance(m, torch.nn.Embedding)]
            if emb != [layer]:
                raise ValueError("layer: whitebox attributes to the module's nn.Embedding (its output), not %s" %
                                 type(layer).__name__)
        if not multiply_by_inputs:
            raise ValueError("multiply_by_inputs=False is not supported: whitebox's scores are multiplied by the inputs")
        self.forward_func = forward_func

    def _run(self, inputs, target, additional_forward_args=None, record=False, **params):
        if additional_forward_args is not None:
            raise ValueError("additional_forward_args: whitebox runs forward(ids) alone")
        tup = isinstance(inputs, tuple)
        if tup:
            if len(inputs) != 1:
                raise ValueError("inputs: one tensor of token ids, not %d" % len(inputs))
            inputs = inputs[0]
        out, recs = explainer(self.forward_func).attribute(inputs, method=self.method, target=target,
                                                           return_record=True, **params)
        return ((out,) if tup else out), recs

    @staticmethod
    def _delta(recs, values):
        return torch.tensor([values(r) for r in recs], dtype=torch.float64)


class IntegratedGradients(_Method):
    """LayerIntegratedGradients(module, module.embedding).attribute(ids,
    baselines=..., target=..., n_steps=..., method=...).sum(-1), or
    IntegratedGradients on the embedded input, summed over the embedding
    dimension, with these differences: exact float64; baselines=None is
    the zero embedding (the Layer class's default is token 0: pass
    baselines=0), an int or a constant integer tensor a token's row;
    method is Captum's ("gausslegendre", the default, "riemann_trapezoid",
    "riemann_left", "riemann_right", "riemann_middle"), with Captum's
    nodes and its step sizes rounded to float32; internal_batch_size is
    accepted and has no effect. The convergence delta is Captum's:
    sum of the scores - (f_c(x) - f_c(baseline))."""

    method = "ig"

    def attribute(self, inputs, baselines=None, target=None, additional_forward_args=None, n_steps=50,
                  method="gausslegendre", internal_batch_size=None, return_convergence_delta=False):
        out, recs = self._run(inputs, target, additional_forward_args, steps=int(n_steps), quadrature=method,
                              **_baseline(baselines))
        if return_convergence_delta:
            return out, self._delta(recs, lambda r: r["delta"])
        return out


class Saliency(_Method):
    """Captum's Saliency on the embedded input, summed over the embedding
    dimension: with abs=True (Captum's default) the sum of the absolute
    gradients of the target's logit, sum_e |d f_c / d x_te|; with
    abs=False the signed sum (whitebox's `saliency` scores)."""

    method = "saliency"

    def attribute(self, inputs, target=None, abs=True, additional_forward_args=None):
        if not abs:
            out, _ = self._run(inputs, target, additional_forward_args)
            return out
        tup = isinstance(inputs, tuple)
        _, recs = self._run(inputs, target, additional_forward_args, features=True)
        rows = [torch.tensor(r["features"], dtype=torch.float64).abs().sum(-1) for r in recs]
        _, batch = _rows(inputs[0] if tup else inputs)
        out = (torch.stack(rows) if len({r.shape for r in rows}) == 1 else rows) if batch else rows[0]
        return (out,) if tup else out


class InputXGradient(_Method):
    """LayerGradientXActivation(module, module.embedding) (InputXGradient
    on the embedded input) summed over the embedding dimension:
    sum_e x_te * d f_c / d x_te, exact float64."""

    method = "gxi"

    def attribute(self, inputs, target=None, additional_forward_args=None):
        out, _ = self._run(inputs, target, additional_forward_args)
        return out


class DeepLift(_Method):
    """DeepLIFT with whitebox's rules (Rescale at every sigmoid and tanh,
    the symmetric split at every product of two varying factors, through
    the LSTM/GRU gates and the attention softmax), which differ from
    Captum's LayerDeepLift: Captum passes nn.LSTM/nn.GRU with plain
    gradients. The scores sum to f_c(x) - f_c(baseline) (the convergence
    delta, Captum's sum - (f_c(x) - f_c(baseline)), is whitebox's
    summation residual); baselines as in the module's docstring."""

    method = "deeplift"

    def attribute(self, inputs, baselines=None, target=None, additional_forward_args=None,
                  return_convergence_delta=False, custom_attribution_func=None):
        if custom_attribution_func is not None:
            raise ValueError("custom_attribution_func is not supported")
        out, recs = self._run(inputs, target, additional_forward_args, **_baseline(baselines))
        if return_convergence_delta:
            return out, self._delta(recs, lambda r: r["delta"])
        return out


class Occlusion(_Method):
    """Occlusion(f).attribute(emb, sliding_window_shapes=(1, E),
    strides=1, baselines=row) on the embedded input: f_c(x) minus f_c with
    one token's embedding set to the baseline row (zero by default), the
    whole of each token's row at once. Other windows and strides are
    refused."""

    method = "occlusion"

    def attribute(self, inputs, sliding_window_shapes=None, strides=None, baselines=None, target=None,
                  additional_forward_args=None, perturbations_per_eval=1, show_progress=False):
        if sliding_window_shapes is not None:
            s = sliding_window_shapes[0] if isinstance(sliding_window_shapes, tuple) and sliding_window_shapes and \
                isinstance(sliding_window_shapes[0], tuple) else sliding_window_shapes
            s = (s,) if isinstance(s, int) else tuple(s)
            if not s or s[0] != 1 or (len(s) == 2 and s[1] != self._dim()) or len(s) > 2:
                raise ValueError("sliding_window_shapes: whitebox occludes one token's whole embedding row, (1, %d), "
                                 "not %r" % (self._dim(), sliding_window_shapes))
        if strides is not None:
            st = strides[0] if isinstance(strides, tuple) and strides and isinstance(strides[0], tuple) else strides
            st = (st,) if isinstance(st, int) else tuple(st)
            if not st or st[0] != 1:
                raise ValueError("strides: whitebox occludes every token, stride 1, not %r" % (strides,))
        out, _ = self._run(inputs, target, additional_forward_args, **_baseline(baselines))
        return out

    def _dim(self):
        return [m for m in self.forward_func.modules() if isinstance(m, torch.nn.Embedding)][0].embedding_dim


class LRP(_Method):
    """Layer-wise relevance propagation with the epsilon rule through the
    linear maps and the gates' signals taking all relevance (Arras et al.
    2017; eps: its epsilon, lrp_bias its bias factor), which Captum's LRP
    has no rules for inside nn.LSTM/nn.GRU. The convergence delta is
    Captum's: the sum of the scores minus f_c(x)."""

    method = "lrp"

    def attribute(self, inputs, target=None, additional_forward_args=None, return_convergence_delta=False,
                  eps=None, lrp_bias=None):
        params = {} if eps is None else {"eps": eps}
        if lrp_bias is not None:
            params["lrp_bias"] = lrp_bias
        out, recs = self._run(inputs, target, additional_forward_args, **params)
        if return_convergence_delta:
            return out, self._delta(recs, lambda r: sum(r["scores"]) - r["logits"][r["class"]])
        return out


# Captum's Layer* names, for code that calls them with the embedding layer.
LayerIntegratedGradients = IntegratedGradients
LayerGradientXActivation = InputXGradient
LayerDeepLift = DeepLift
LayerLRP = LRP

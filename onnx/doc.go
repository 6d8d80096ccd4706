// Package onnx reads LSTM classifiers exported by torch.onnx.export: it
// decodes the ONNX file, recognises the graph as Embedding → LSTM layers
// → head → one or two Linear layers, and checks what it recognised by
// evaluating the graph itself.
//
// Decode reads the few fields of onnx.proto a classifier needs with
// protowire (google.golang.org/protobuf/encoding/protowire; no generated
// code, no cgo, no onnxruntime). Every length is checked against the bytes
// left before anything is allocated, a tensor's element count against its
// bytes, nesting is fixed (subgraphs are skipped, not decoded), and
// tensors stored as external data are refused.
//
// The interpreter (Program.Run) evaluates exactly the operators of such an
// export (Supported) in float64; its LSTM and GRU are written from the
// ONNX operator specification (gates i, o, f, c, and z, r, h with
// linear_before_reset = 1; W, R, B; sequence_lens, initial states,
// layouts 0 and 1), independently of package cell.
//
// Recognize walks the graph: the classifier back from the output (Gemm,
// or MatMul + Add, with Relu or Tanh between two of them), the LSTM nodes
// (their W, R, B constants mapped to PyTorch's gate order i, f, g, o and
// bias_ih + bias_hh; or the GRU nodes, gates z, r, h mapped to r, z, n,
// Params.Kind = cell.LayerGRU), and the embedding (the one Gather of a constant
// table by the ids). The plumbing between them (Transpose, Reshape,
// Squeeze, Unsqueeze, Concat, Slice, Gather, Shape, Expand, ...) is not
// pattern-matched: the graph is evaluated on a few probes with random
// markers in place of the embedding table and of each LSTM node's outputs,
// and each LSTM must then read exactly the layer below (the first, the
// embedded ids in order), start from zero states, and the classifier must
// read exactly one of the heads (hn, hn-bf, last, mean, max) of the top
// layer's markers. Whatever else the graph computes is refused, naming the
// node. Check then compares the graph's logits with the engine's model.
package onnx

"""The GPT of parc-model (GPT-2's layout: pre-norm blocks, fused QKV,
tanh GELU, tied LM head, causal attention) in PyTorch eager, timed as a train
step with AdamW or as a forward pass under no_grad. Prints `step time: S s`
(mean of the steps after the first), as parc's launcher does.

  python torch_gpt.py --threads T [--forward] [--steps N]
      [--layers 4 --hidden 256 --heads 8 --seq 128 --batch 8 --vocab 4096]
      [--onnxruntime]   # time the forward pass exported to onnxruntime
"""
import argparse
import time

import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = torch.nn.LayerNorm(hidden)
        self.c_attn = torch.nn.Linear(hidden, 3 * hidden)
        self.attn_proj = torch.nn.Linear(hidden, hidden)
        self.ln_2 = torch.nn.LayerNorm(hidden)
        self.c_fc = torch.nn.Linear(hidden, 4 * hidden)
        self.mlp_proj = torch.nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = (self.c_attn(self.ln_1(x))
                   .view(b, s, 3, self.heads, h // self.heads)
                   .permute(2, 0, 3, 1, 4))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.attn_proj(a.transpose(1, 2).reshape(b, s, h))
        m = self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))
        return x + m


class Gpt(torch.nn.Module):
    def __init__(self, layers, hidden, heads, seq, vocab):
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, hidden)
        self.wpe = torch.nn.Parameter(torch.randn(seq, hidden) * 0.02)
        self.blocks = torch.nn.ModuleList(
            Block(hidden, heads) for _ in range(layers))
        self.ln_f = torch.nn.LayerNorm(hidden)

    def forward(self, ids, labels):
        x = self.wte(ids) + self.wpe
        for block in self.blocks:
            x = block(x)
        logits = self.ln_f(x) @ self.wte.weight.t()
        return F.cross_entropy(logits.flatten(0, 1), labels.flatten())


def time_onnxruntime(model, ids, labels, a):
    import os
    import tempfile

    import onnxruntime

    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "gpt.onnx")
        torch.onnx.export(model, (ids, labels), path, dynamo=False,
                          input_names=["ids", "labels"])
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = a.threads
        options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(path, options)
    feed = {"ids": ids.numpy(), "labels": labels.numpy()}
    times = []
    for _ in range(a.steps):
        start = time.perf_counter()
        session.run(None, feed)
        times.append(time.perf_counter() - start)
    rest = times[1:] or times
    print(f"step time: {sum(rest) / len(rest):.6f} s")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--forward", action="store_true")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--onnxruntime", action="store_true")
    for name, default in (("layers", 4), ("hidden", 256), ("heads", 8),
                          ("seq", 128), ("batch", 8), ("vocab", 4096)):
        p.add_argument("--" + name, type=int, default=default)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = Gpt(a.layers, a.hidden, a.heads, a.seq, a.vocab)
    ids = torch.randint(0, a.vocab, (a.batch, a.seq))
    labels = torch.randint(0, a.vocab, (a.batch, a.seq))
    if a.onnxruntime:
        return time_onnxruntime(model, ids, labels, a)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    times = []
    for _ in range(a.steps):
        start = time.perf_counter()
        if a.forward:
            with torch.no_grad():
                model(ids, labels)
        else:
            optimizer.zero_grad(set_to_none=True)
            model(ids, labels).backward()
            optimizer.step()
        times.append(time.perf_counter() - start)
    rest = times[1:] or times
    print(f"step time: {sum(rest) / len(rest):.6f} s")


if __name__ == "__main__":
    main()

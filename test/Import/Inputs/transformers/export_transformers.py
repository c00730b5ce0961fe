#!/usr/bin/env python3
"""Exports the Hugging Face and torch.nn fixtures of the ONNX import tests.

Tests never run this; it needs torch, transformers, onnx and onnxscript
(bench-style venv: pip install torch transformers onnx onnxscript) and
writes next to itself, for each model M of MODELS, mask variant V (nomask:
input_ids only; mask: input_ids and a left-padded attention_mask) and
exporter E (ts: torch.onnx.export(dynamo=False), opset 17; dynamo: the
default exporter, its default opset, IR 10, weights in an external .data
file):

  M-V-E.onnx [+ M-V-E.onnx.data], M-V.inputs.safetensors,
  M-V.outputs.safetensors

The configurations are tiny (hidden 32, 2 layers, 4 heads, vocabulary 64,
sequence 8, batch 2) and the weights random (biases and norm weights too,
not their constant initial values); the outputs are the
framework's own, recorded at export time. Node doc strings and metadata
(the dynamo exporter's stack traces) are dropped to keep the files small,
all but the module paths (pkg.torch.onnx.name_scopes).
"""
import os
import sys
import warnings

import numpy as np
import onnx
import torch
import transformers
from transformers import masking_utils

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))
from safetensors_file import write as write_safetensors  # noqa: E402
BATCH, SEQ, VOCAB, HIDDEN, LAYERS, HEADS = 2, 8, 64, 32, 2, 4

# transformers detects packed sequences with torch.diff, which the
# TorchScript exporter cannot export; these inputs are never packed.
masking_utils.find_packed_sequence_indices = lambda position_ids: None


def causal_lm(config_class, model_class, **extra):
    config = config_class(hidden_size=HIDDEN, intermediate_size=2 * HIDDEN,
                          num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                          vocab_size=VOCAB, max_position_embeddings=4 * SEQ,
                          **extra)
    return model_class(config)


def make(name):
    t = transformers
    if name == "gpt2":
        return t.GPT2LMHeadModel(t.GPT2Config(
            n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, vocab_size=VOCAB,
            n_positions=4 * SEQ))
    if name == "llama":  # grouped-query attention: 2 key/value heads
        return causal_lm(t.LlamaConfig, t.LlamaForCausalLM,
                         num_key_value_heads=2)
    if name == "mistral":
        return causal_lm(t.MistralConfig, t.MistralForCausalLM,
                         num_key_value_heads=2, sliding_window=None)
    if name == "qwen2":
        return causal_lm(t.Qwen2Config, t.Qwen2ForCausalLM,
                         num_key_value_heads=2)
    if name == "bert":
        return t.BertModel(t.BertConfig(
            hidden_size=HIDDEN, num_hidden_layers=LAYERS,
            num_attention_heads=HEADS, intermediate_size=2 * HIDDEN,
            vocab_size=VOCAB, max_position_embeddings=4 * SEQ),
            add_pooling_layer=False)
    if name == "t5-encoder":
        return t.T5EncoderModel(t.T5Config(
            d_model=HIDDEN, d_kv=HIDDEN // HEADS, d_ff=2 * HIDDEN,
            num_layers=LAYERS, num_heads=HEADS, vocab_size=VOCAB))
    if name == "torch-encoder":
        return TorchEncoder()
    raise ValueError(name)


def perturb_constant_parameters(model):
    """Gives every parameter that initialization left constant (biases at
    0, norm weights at 1) small random values, as a trained model has:
    TorchScript's exporter would otherwise share one initializer among
    equal tensors (every zero bias of the model under one name)."""
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.numel() > 1 and bool(
                    (parameter == parameter.flatten()[0]).all()):
                parameter.add_(0.02 * torch.randn(
                    parameter.shape, generator=generator))


class TorchEncoder(torch.nn.Module):
    """torch.nn.TransformerEncoder over token embeddings; the mask is a
    key padding mask (True where attention_mask is 0)."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, HIDDEN)
        layer = torch.nn.TransformerEncoderLayer(
            HIDDEN, HEADS, dim_feedforward=2 * HIDDEN, dropout=0.0,
            batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(
            layer, LAYERS, enable_nested_tensor=False)
        # TransformerEncoder starts every layer as a copy of `layer`, and
        # TorchScript's exporter would store the equal weights once: the
        # layers get weights of their own, as a trained encoder has.
        for module in self.encoder.layers.modules():
            if isinstance(module, torch.nn.Linear):
                module.reset_parameters()
            elif isinstance(module, torch.nn.MultiheadAttention):
                module._reset_parameters()

    def forward(self, input_ids, attention_mask=None):
        padding = None if attention_mask is None else attention_mask == 0
        return self.encoder(self.embed(input_ids),
                            src_key_padding_mask=padding)


class Outputs(torch.nn.Module):
    """The model's first output from plain tensor arguments."""

    def __init__(self, model, with_mask):
        super().__init__()
        self.model, self.with_mask = model, with_mask

    def forward(self, input_ids, attention_mask=None):
        if isinstance(self.model, TorchEncoder):
            return self.model(input_ids, attention_mask)
        kwargs = {"return_dict": False}
        if attention_mask is not None:
            kwargs["attention_mask"] = attention_mask
        if "use_cache" in self.model.forward.__code__.co_varnames:
            kwargs["use_cache"] = False
        return self.model(input_ids=input_ids, **kwargs)[0]


# The one piece of node metadata kept: the PyTorch module path, from which
# parc names the weights the exporter folded (val_N).
NAME_SCOPES = "pkg.torch.onnx.name_scopes"


def strip(path):
    """Drops doc strings and metadata that only describe the export."""
    proto = onnx.load(path, load_external_data=False)
    for node in proto.graph.node:
        node.doc_string = ""
        kept = [(p.key, p.value) for p in node.metadata_props
                if p.key == NAME_SCOPES]
        del node.metadata_props[:]
        for key, value in kept:
            node.metadata_props.add(key=key, value=value)
    del proto.metadata_props[:]
    proto.graph.doc_string = ""
    for value in list(proto.graph.value_info):
        del value.metadata_props[:]
    onnx.save(proto, path)


def export(name, variant, exporter, model, inputs):
    stem = f"{name}-{variant}-{exporter}"
    path = os.path.join(HERE, stem + ".onnx")
    names = list(inputs)
    kwargs = {"dynamo": exporter == "dynamo"}
    if exporter == "ts":
        kwargs["opset_version"] = 17
    else:
        kwargs["external_data"] = True
    torch.onnx.export(model, tuple(inputs.values()), path, input_names=names,
                      output_names=["output"], **kwargs)
    strip(path)


def main(names):
    warnings.filterwarnings("ignore")
    for name in names:
        torch.manual_seed(0)
        model = make(name).eval()
        perturb_constant_parameters(model)
        ids = torch.randint(0, VOCAB, (BATCH, SEQ))
        mask = torch.ones(BATCH, SEQ, dtype=torch.int64)
        mask[1, :3] = 0  # left padding
        for variant in ("nomask", "mask"):
            inputs = {"input_ids": ids}
            if variant == "mask":
                inputs["attention_mask"] = mask
            wrapped = Outputs(model, variant == "mask").eval()
            with torch.no_grad():
                output = wrapped(*inputs.values())
            stem = os.path.join(HERE, f"{name}-{variant}")
            write_safetensors(stem + ".inputs.safetensors",
                              {k: v.numpy() for k, v in inputs.items()})
            write_safetensors(stem + ".outputs.safetensors",
                              {"output": output.numpy()})
            for exporter in ("ts", "dynamo"):
                try:
                    export(name, variant, exporter, wrapped, inputs)
                    print(f"{name}-{variant}-{exporter}: exported")
                    continue
                except Exception as error:  # retried below
                    failure = f"{type(error).__name__}: {str(error)[-300:]}"
                # The TorchScript exporter cannot export SDPA with
                # enable_gqa (grouped-query models without a mask): the
                # model's eager attention (repeat_kv, matmul, softmax) is
                # what such users export instead.
                if not hasattr(model, "set_attn_implementation"):
                    print(f"{name}-{variant}-{exporter}: FAILED {failure}")
                    continue
                model.set_attn_implementation("eager")
                try:
                    export(name, variant, exporter, wrapped, inputs)
                    print(f"{name}-{variant}-{exporter}: exported with eager "
                          f"attention (sdpa: {failure[:80]})")
                except Exception as error:
                    print(f"{name}-{variant}-{exporter}: FAILED {failure}; "
                          f"eager: {type(error).__name__}: "
                          f"{str(error)[-300:]}")
                model.set_attn_implementation("sdpa")


MODELS = ["gpt2", "llama", "mistral", "qwen2", "bert", "t5-encoder",
          "torch-encoder"]

if __name__ == "__main__":
    main(sys.argv[1:] or MODELS)

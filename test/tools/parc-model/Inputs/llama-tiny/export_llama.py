#!/usr/bin/env python3
"""Records what Hugging Face's LlamaForCausalLM computes for parc-model's
llama-tiny preset, for test/tools/parc-model/llama.test.

Tests never run this; it needs torch and transformers (pip install torch
transformers numpy in a venv). It writes next to itself:

  weights.safetensors  random weights under transformers' names, scaled up
                       from the default init so that attention is far from
                       uniform and rotary positions change the loss
  inputs.safetensors   input_ids and labels [2, 32]
  outputs.safetensors  loss: mean cross-entropy of the logits against labels
                       (no shift: parc's labels are per position)
  step.safetensors     the loss and every weight after one SGD step,
                       w - 0.5 * dloss/dw (torch's autograd: the gradients
                       of every op)

It checks that the recorded loss moves without Llama 3's frequency scaling
or with query heads mapped to the wrong key/value heads, so a test against
it would notice either.
"""
import os
import sys

import numpy as np
import torch
import transformers

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", ".."))
from safetensors_file import write as write_safetensors  # noqa: E402

BATCH, SEQ, VOCAB = 2, 32, 256
LEARNING_RATE = 0.5


def config(scaled=True, kv_heads=2):
    rope = {"rope_type": "default", "rope_theta": 500000.0}
    if scaled:
        rope = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 16}
    return transformers.LlamaConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=176,
        num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=kv_heads, max_position_embeddings=SEQ,
        rms_norm_eps=1e-5, tie_word_embeddings=False, attention_bias=False,
        mlp_bias=False, rope_parameters=rope, attn_implementation="eager")


def model(weights, **options):
    llama = transformers.LlamaForCausalLM(config(**options)).eval()
    state = llama.state_dict()
    for name, value in weights.items():
        if name in state and state[name].shape == value.shape:
            state[name] = value
    llama.load_state_dict(state)
    return llama


def loss_of(llama, input_ids, labels):
    logits = llama(input_ids=input_ids).logits
    return torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB),
                                             labels.reshape(-1))


def main():
    torch.manual_seed(0)
    reference = transformers.LlamaForCausalLM(config()).eval()
    weights = {}
    for name, value in reference.state_dict().items():
        if "rotary" in name:
            continue
        if name.endswith("layernorm.weight") or name == "model.norm.weight":
            weights[name] = 1 + 0.1 * torch.randn(value.shape)
        else:
            weights[name] = 0.3 * torch.randn(value.shape)
    input_ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    labels = torch.randint(0, VOCAB, (BATCH, SEQ))

    llama = model(weights)
    loss = loss_of(llama, input_ids, labels)
    loss.backward()
    stepped = {name: (param - LEARNING_RATE * param.grad).detach()
               for name, param in llama.named_parameters()}
    stepped["loss"] = loss.detach()

    with torch.no_grad():
        unscaled = loss_of(model(weights, scaled=False), input_ids, labels)
        # Query head h reads key/value head h // 2; with the k/v heads tiled
        # instead (h reads h % 2) the loss must differ.
        tiled = dict(weights)
        for part in ("k_proj", "v_proj"):
            for layer in range(2):
                name = f"model.layers.{layer}.self_attn.{part}.weight"
                heads = weights[name].reshape(2, 16, 64)
                tiled[name] = heads.repeat(2, 1, 1).reshape(64, 64)
        ungrouped = loss_of(model(tiled, kv_heads=4), input_ids, labels)
    recorded = float(loss.detach())
    for what, other in (("frequency scaling", unscaled),
                        ("the grouped-query head mapping", ungrouped)):
        change = abs(float(other) - recorded) / recorded
        print(f"loss {recorded:.7g}; without {what}: {float(other):.7g} "
              f"(relative change {change:.2g})")
        if change < 1e-4:
            sys.exit(f"the loss does not depend on {what}; the fixture would "
                     "not test it")

    def arrays(tensors):
        return {name: np.array(value.detach().numpy())
                for name, value in tensors.items()}

    write_safetensors(os.path.join(HERE, "weights.safetensors"),
                      arrays(weights))
    write_safetensors(os.path.join(HERE, "inputs.safetensors"),
                      arrays({"input_ids": input_ids, "labels": labels}))
    write_safetensors(os.path.join(HERE, "outputs.safetensors"),
                      arrays({"loss": loss}))
    write_safetensors(os.path.join(HERE, "step.safetensors"), arrays(stepped))


if __name__ == "__main__":
    main()

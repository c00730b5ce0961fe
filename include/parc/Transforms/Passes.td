//===- Passes.td - parc graph passes -----------------------*- tablegen -*-===//

#ifndef PARC_TRANSFORMS_PASSES_TD
#define PARC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def VerifyModelPass : Pass<"parc-verify-model", "::mlir::ModuleOp"> {
  let summary = "Checks the model convention of every function";
  let description = [{
    Every argument of every `func.func` must be a static-shape tensor with a
    `parc.role` (param, input, label) and a `parc.name` unique within its
    function; result names must be unique. Each violation is reported at the
    argument's location.
  }];
  let dependentDialects = ["::mlir::parc::ParcDialect"];
}

def PrintModelStatsPass : Pass<"parc-print-model-stats", "::mlir::ModuleOp"> {
  let summary = "Prints parameters, FLOPs per step and op counts";
  let description = [{
    For each function: the parameter count and bytes of its `param`
    arguments, its forward FLOPs from each op's FlopCountOpInterface, the
    training estimate (3x forward) and a histogram of its ops. Prints to
    stdout and leaves the IR unchanged.
  }];
}

def PrintShardingRulesPass : Pass<"parc-print-sharding-rules"> {
  let summary = "Attaches each op's sharding rule as a readable attribute";
  let description = [{
    A debugging aid that makes the rule table reviewable in one lit test:
    every op implementing ShardingRuleOpInterface gets a string attribute
    `parc.sharding_rule` such as
    `([i, k], [k, j]) -> ([i, j]) {i=8, j=32, k=16 reduction}`.
  }];
}

def AutodiffPass : Pass<"parc-autodiff", "::mlir::func::FuncOp"> {
  let summary = "Appends the gradient of the loss for every parameter";
  let description = [{
    For a model function whose first result is a scalar loss, builds the
    gradient of the loss with respect to every `param` argument in reverse
    mode, asking each op's GradientOpInterface for its vector-Jacobian
    product (no op is special-cased here), and returns the gradients after
    the original results, named `<param>.grad`. An op without a gradient
    rule, or a function without a scalar loss, is a located error.
  }];
}

def MixedPrecisionPass : Pass<"parc-mixed-precision", "::mlir::func::FuncOp"> {
  let summary = "Stores a model's activations in bf16 (or f16), weights in f32";
  let description = [{
    Runs on a model before autodiff (--parc-make-train-step=precision=
    bf16-mixed runs it itself): every op with float operands computes on
    16-bit copies (a `parc.cast` at each use of an f32 argument or constant)
    and stores 16-bit results, except the ops that keep full precision (the
    cross-entropy loss) and what follows them; results are cast back to
    their f32 types. An op that stores no f32 result (a cast to integers)
    reads its operands as they are. The function is marked
    `parc.precision = "bf16-mixed"` (or "f16-mixed"); a marked function is
    an error. The runtime computes each op in f32 and rounds its 16-bit
    results once (runtime.md, "Mixed precision").
  }];
  let options = [
    Option<"type", "type", "std::string", /*default=*/"\"bf16\"",
           "bf16 or f16">
  ];
}

def MakeTrainStepPass : Pass<"parc-make-train-step", "::mlir::func::FuncOp"> {
  let summary = "Turns a loss function into one optimizer step";
  let description = [{
    train_step(params, optimizer state, batch) -> (loss, new params, new
    state): gradients by --parc-autodiff, optional clipping by global norm,
    and an AdamW or SGD update per parameter. The optimizer state becomes
    `optstate` arguments (AdamW: `<param>.adam_m`, `<param>.adam_v`; SGD:
    `<param>.momentum`; both: `optimizer.step`, the 1-based step count).
    A result named like an argument is that argument's value for the next
    step: runners feed it back, and checkpoints carry it. With
    precision=bf16-mixed (f16-mixed) the step is marked `parc.precision =
    "bf16-mixed"` ("f16-mixed"), which a plan's "precision" must match.
    f16-mixed scales the loss dynamically as PyTorch's GradScaler does
    (state `loss_scale.scale` and `loss_scale.growth_tracker`): the
    backward pass starts from the scale, the gradients are unscaled, and a
    step whose gradients overflow leaves the parameters, the optimizer
    state and the step count as they were and halves the scale; after
    `loss-scale-window` steps without overflow the scale doubles.
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adamw\"",
           "adamw or sgd">,
    Option<"lr", "lr", "double", /*default=*/"1e-3", "Learning rate">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "AdamW beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "AdamW beta2">,
    Option<"epsilon", "eps", "double", /*default=*/"1e-8", "AdamW epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "Decoupled weight decay (AdamW)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0",
           "SGD momentum">,
    Option<"clip", "clip", "double", /*default=*/"0.0",
           "Clip gradients to this global norm (0: no clipping)">,
    Option<"precision", "precision", "std::string", /*default=*/"\"f32\"",
           "f32, bf16-mixed or f16-mixed: activations in bf16 or f16 "
           "(--parc-mixed-precision before the gradients), f32 weights, "
           "gradients and optimizer state; f16-mixed with dynamic loss "
           "scaling">,
    Option<"lossScale", "loss-scale", "double", /*default=*/"65536",
           "f16-mixed: the initial loss scale (PyTorch GradScaler's "
           "init_scale)">,
    Option<"lossScaleWindow", "loss-scale-window", "int64_t",
           /*default=*/"2000",
           "f16-mixed: steps without overflow before the scale doubles "
           "(GradScaler's growth_interval)">
  ];
}

def ApplyPlanPass : Pass<"parc-apply-plan", "::mlir::ModuleOp"> {
  let summary = "Attaches the mesh and shardings of a plan file";
  let description = [{
    Reads a plan (docs/sharding.md, "Plan files"; the smallest is
    `{"mesh": {"dp": 2, "tp": 2}, "shardings": {"x": [["dp"], []]}}`),
    creates `dist.mesh @mesh` with the plan's axes in order, and sets
    `dist.plan_sharding` on every argument the plan names by `parc.name`.
    A name may also be the `parc.name` of an op (its first result, such as
    GPT's residual stream `h.0.attn.residual`): the value is then pinned
    with a `dist.constraint` marked `dist.from_plan` (plan priority). Unknown names or axes, and malformed files,
    are errors.
  }];
  let options = [
    Option<"planFile", "plan", "std::string", /*default=*/"\"\"",
           "Path of the plan JSON file">
  ];
  let dependentDialects = ["::mlir::dist::DistDialect"];
}

def ShardingPropagationPass
    : Pass<"parc-propagate-sharding", "::mlir::func::FuncOp"> {
  let summary = "Gives every value a sharding, from a few annotations";
  let description = [{
    Seeds: `dist.sharding` on arguments, results and `dist.constraint`
    (explicit), `dist.plan_sharding` on arguments (plan). Walks ops forward
    and backward through their ShardingRuleOpInterface to a fixed point.
    Per factor, the highest-priority shardings win (explicit > plan >
    propagated); among equals the one that moves fewer bytes, then a
    sharded choice over leaving the factor whole, then the lexicographically
    smaller axis list. Two explicit annotations that shard one factor
    differently are an error.

    Writes `dist.sharding` on every argument, `dist.shardings` (one per
    result) on every op, and `dist.mesh` on the function.
  }];
  let dependentDialects = ["::mlir::dist::DistDialect"];
}

def PartitionPass : Pass<"parc-partition", "::mlir::func::FuncOp"> {
  let summary = "Rewrites a sharded function into its per-rank program";
  let description = [{
    Runs after --parc-propagate-sharding. Every op is rebuilt on local
    (per-rank) shapes: its factor shardings are read from its recorded
    result shardings (and its operands' for reduction factors), each operand
    is resharded to what the op needs with the cheapest collectives
    (partial -> replicated: all_reduce, partial -> split: reduce_scatter,
    split -> replicated: all_gather, split moving between dimensions:
    all_to_all, replicated -> split: all_slice), and ops whose rule asks for
    it build their local algorithm (LocalPartitionOpInterface). Function
    results get the layout of their `dist.sharding`, or replicated.

    The function keeps `dist.sharding` on arguments and results (how local
    tensors make up the global ones) and gains `dist.partitioned`.
  }];
  let dependentDialects = ["::mlir::dist::DistDialect"];
}

def LocalSgdPass : Pass<"parc-local-sgd", "::mlir::func::FuncOp"> {
  let summary = "Makes a partitioned train step one local SGD replica's";
  let description = [{
    Runs after --parc-partition on a function that --parc-apply-plan marked
    `dist.local_sgd` (a plan's `"data_parallel": {"sync": "local-sgd"}`);
    does nothing to others. The step is written at one replica's batch and
    nothing of it is split over the marked axis, whose coordinates are the
    replicas: each input and label becomes the replica's block (along
    dimension 0) of a batch the axis size times larger, and each scalar
    metric the step returns (the loss) the replicas' mean. A collective
    over the axis is an error. The executables average the replicas every
    `sync_every` steps (runtime.md).
  }];
  let dependentDialects = ["::mlir::parc::ParcDialect"];
}

def ParameterServerPass : Pass<"parc-parameter-server", "::mlir::ModuleOp"> {
  let summary = "Cuts a partitioned train step into the workers' and the "
                "dedicated parameter servers' programs";
  let description = [{
    Runs after --parc-partition on a function that --parc-apply-plan marked
    `dist.parameter_server` (a plan's `"data_parallel": {"sync":
    "parameter-server", "placement": "dedicated"}`): the colocated
    parameter server's program (ZeRO-1's) on a mesh whose first axis `ps`
    has the workers at 0 and the servers at 1. The function becomes the
    workers' stage 0 and a new `@<name>_servers` stage 1: the workers push
    each gradient's parts to their servers and pull the updated parameters
    (dist.send, dist.recv); each server sums the workers' parts of its
    tensors, runs their optimizer updates with its part of the optimizer
    state and sends the new parts back. Does nothing to other functions.
  }];
  let dependentDialects = ["::mlir::parc::ParcDialect",
                           "::mlir::dist::DistDialect"];
}

def LowerBatchNormPass : Pass<"parc-lower-batch-norm", "::mlir::func::FuncOp"> {
  let summary = "Writes batch_norm and batch_norm_grad out in parc ops";
  let description = [{
    Each op's batch becomes a leading dimension of `groups` groups (none
    for one group), over which the statistics are not reduced: the groups
    split over data parallelism with no communication, and one group's
    reductions over a split batch are summed over the ranks
    (SyncBatchNorm's). The first group's statistics are a sum weighted one
    for it and zero for the others. The gradient recomputes the statistics
    from the input. Runs before sharding propagation (parc-compile does).
  }];
  let dependentDialects = ["::mlir::parc::ParcDialect"];
}

def PipelinePartitionPass
    : Pass<"parc-pipeline-partition", "::mlir::ModuleOp"> {
  let summary = "Splits a partitioned program into pipeline stages";
  let description = [{
    Runs after --parc-partition on functions with `dist.pipeline` (a plan's
    "pipeline"). The partitioned function is the program of one micro-batch
    on a mesh with a `microbatch` axis (ApplyPlan splits every input's
    batch over it); this pass folds that axis into time and the stage axis
    into separate functions `@<name>.stage<s>`:

    - Ops are placed on stages: parameters (and their optimizer state) of
      layer i live on the stage that holds layer i ("layers_per_stage", or
      an even split); a forward op runs on the latest stage of its
      operands (and so does an op recomputation copied, as its original
      does), a backward or update op on the stage of the parameters it
      reads, else of the saved activations it reads (the latest), else of
      the gradients it combines (the earliest), an update op without
      parameters on the stage of its largest operand. Ops on nothing but
      stage-less values (arguments outside layers, constants) are
      materialized on each stage that needs them.
    - Each stage runs its ops per micro-batch in the schedule's order of
      forward and backward units (GPipe, 1F1B), ops that do not depend on
      the micro-batch once before them and the ops after the sum over
      micro-batches (optimizer update) once after them. A collective over
      the micro-batch axis becomes a running sum over micro-batches (the
      gradient accumulation) plus the same collective over the remaining
      axes.
    - A value used on another stage is sent right after it is computed
      (`dist.send`, buffered) and received where it is first needed
      (`dist.recv`), one channel per value and micro-batch. A result named
      like an argument (a parameter's new value) is returned by every stage
      that takes the argument.

    The mesh loses the micro-batch axis; each stage function gets
    `dist.stage` and keeps `dist.pipeline`. Fails with a diagnostic when
    the stages do not fit the layers, or when the static schedule would
    deadlock.
  }];
  let dependentDialects = ["::mlir::dist::DistDialect"];
}

def VerifyMemoryPlanPass
    : Pass<"parc-verify-memory-plan", "::mlir::func::FuncOp"> {
  let summary = "Proves that no two live tensors of a memory plan overlap";
  let description = [{
    Sweeps the function in program order: every tensor must lie inside the
    arena, and no two tensors live at the same time may share a byte. A
    result may take the buffer of an operand that dies at its op when the
    op may write over it (MayWriteOverOperand), and an argument's buffer
    after the argument's last read only as the argument's next value (the
    result returned under its name). --parc-plan-memory runs the same check
    before it records a plan.
  }];
}

def CommReportPass : Pass<"parc-comm-report", "::mlir::ModuleOp"> {
  let summary = "Prints every collective and the bytes it moves";
  let description = [{
    For each function that uses collectives: one line per collective (kind,
    axes, group size, elements, buffer bytes and ring traffic per rank,
    location), then totals per kind and overall. Buffer bytes are the full
    tensor the collective covers on a rank; traffic is what a rank sends in
    the bandwidth-optimal algorithm (CommunicationOpInterface). Prints to
    stdout and leaves the IR unchanged.
  }];
}

def MemoryPlanPass : Pass<"parc-plan-memory", "::mlir::func::FuncOp"> {
  let summary = "Places every tensor of a rank program in one arena";
  let description = [{
    Each tensor lives from the op that defines it to its last use;
    arguments for the whole program (they persist across steps) and
    results from their definition to the end of the step. Arguments lie
    at the bottom of the arena; results are placed once every lifetime is
    known, 64-byte aligned (see below). A result named like an
    argument (a parameter's next value) is written into the argument's
    buffer once nothing else reads it (donation), and a result of a
    MayWriteOverOperand op takes the buffer of an operand of its type that
    dies there. Records `parc.offset` on
    arguments, `parc.offsets` on ops, and on the function `parc.arena_bytes`
    (the peak) and `parc.tensor_bytes` (the sum of all tensor sizes, what a
    plan without reuse would need).

    The placement is the smallest of best fit in program order and five
    offline greedy ones (by size, by breadth, by lifetime). A greedy one
    walks the placed buffers to find each gap, O(n^2) for n results; it
    gives up after `greedy-work` n log2 n visits, so the pass is O(n log n).
  }];
  let options = [
    Option<"greedyWork", "greedy-work", "int64_t", /*default=*/"256",
           "Placed buffers each greedy placement may visit, per n log2 n "
           "results (0: best fit in program order alone)">,
  ];
}

#endif // PARC_TRANSFORMS_PASSES_TD

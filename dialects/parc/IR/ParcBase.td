//===- ParcBase.td - parc graph dialect definition ---------*- tablegen -*-===//
//
// The `parc` dialect holds the tensor ops of a model graph: one op is one
// library kernel. Ops work on builtin ranked tensors with static shapes.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_IR_PARCBASE_TD
#define PARC_IR_PARCBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Parc_Dialect : Dialect {
  let name = "parc";
  let cppNamespace = "::mlir::parc";
  let summary = "Tensor graph ops of models, the input of parc's parallelizer";
  let description = [{
    A model is a `func.func` whose arguments carry `parc.role` (`param`,
    `input`, `label`) and a unique `parc.name`. Its body is made of `parc`
    ops on ranked tensors with static shapes.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    /// Names of the argument and result attributes of the model convention.
    static constexpr ::llvm::StringLiteral kRoleAttrName = "parc.role";
    static constexpr ::llvm::StringLiteral kNameAttrName = "parc.name";
    static constexpr ::llvm::StringLiteral kInitAttrName = "parc.init";
    /// The shape of the argument in checkpoint files, when it differs.
    static constexpr ::llvm::StringLiteral kCheckpointShapeAttrName =
        "parc.checkpoint_shape";
    /// An argument that starts as the named argument starts (its entry in a
    /// weights file, else its init stream), in its own element type: a
    /// mixed-precision step's f32 master copy of a bf16 parameter.
    static constexpr ::llvm::StringLiteral kInitFromAttrName = "parc.init_from";

  private:
    void registerAttributes();
  public:
  }];
}

// A result may take the buffer of an operand of its type (the memory plan's
// in-place updates): every kernel reads element i of such an operand for
// the last time before it writes element i of the result. Elementwise ops
// do; so do row-wise ones that read a whole row before writing any of it
// (the cross-entropy gradient). Operands of other types are read whole.
def Parc_MayWriteOverOperand : NativeOpTrait<"MayWriteOverOperand"> {
  let cppNamespace = "::mlir::parc";
}

// Mixed precision runs this op on f32 operands and keeps its results and
// everything computed from them in f32 (the loss: a mean over many
// positions, each a logsumexp over the classes, loses its small terms in
// bf16).
def Parc_KeepsFullPrecision : NativeOpTrait<"KeepsFullPrecision"> {
  let cppNamespace = "::mlir::parc";
}

// An f32 scalar such as an optimizer's step count.
def Parc_ScalarF32 : 0DTensorOf<[F32]>, BuildableType<
    "::mlir::RankedTensorType::get({}, $_builder.getF32Type())">;

def Parc_FloatElement : AnyTypeOf<[F32, BF16, F16]>;
def Parc_IntElement : AnyTypeOf<[I32, I64]>;

def Parc_FloatTensor : StaticShapeTensorOf<[F32, BF16, F16]>;
def Parc_IntTensor : StaticShapeTensorOf<[I32, I64]>;
def Parc_AnyTensor : StaticShapeTensorOf<[F32, BF16, F16, I32, I64]>;
// A scalar index such as the block of the vocabulary a rank holds.
def Parc_OffsetScalar : 0DTensorOf<[I64]>, BuildableType<
    "::mlir::RankedTensorType::get({}, $_builder.getI64Type())">;

#endif // PARC_IR_PARCBASE_TD

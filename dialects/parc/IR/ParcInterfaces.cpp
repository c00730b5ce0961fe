//===- ParcInterfaces.cpp - interfaces of parc ops ------------------------===//

#include "parc/IR/ParcInterfaces.h"

#include "parc/IR/ParcInterfaces.cpp.inc"

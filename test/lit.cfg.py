# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "PARC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "unittests", "expect-exit.py", "compare-tensors.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.parc_obj_root, "test")

config.substitutions.append(("%python", config.python_executable))
# `%exit1 cmd`: cmd must exit with code 1 (a user error, never a crash).
config.substitutions.append(("%exit1", config.python_executable + " " +
                             os.path.join(config.test_source_root,
                                          "expect-exit.py") + " 1"))
config.substitutions.append(("%compare", os.path.join(config.test_source_root,
                                                      "compare-tensors.py")))
config.substitutions.append(("%plans", os.path.join(
    config.test_source_root, "Transforms", "sharding", "Inputs")))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root,
                                                     "Inputs")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.parc_tools_dir, config.llvm_tools_dir]
tools = ["parc-opt", "parc-run", "parc-model", "parc-compile",
         "parc-translate", "parc-plan", "search-parallel-plan"]

# Compiled programs run under Open MPI as root in CI, with more ranks than
# cores.
config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
config.environment["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
config.environment["OMP_NUM_THREADS"] = "1"
llvm_config.add_tool_substitutions(tools, tool_dirs)
# A tool by its full path, for commands that change PATH.
config.substitutions.append(
    ("%parc_plan", os.path.join(config.parc_tools_dir, "parc-plan")))

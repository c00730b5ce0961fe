# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "PARC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "unittests"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.parc_obj_root, "test")

config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root,
                                                     "Inputs")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.parc_tools_dir, config.llvm_tools_dir]
tools = ["parc-opt", "parc-run", "parc-model"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

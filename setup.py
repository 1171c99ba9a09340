"""Build lzlite and its native parts with `pip install -e .`.

Four Cython extensions: the zoo's batched game binding (zoo._zoo), its bots and Connect Four solver
(zoo._bots), the search tree binding (lzlite.mcts.ctree._ctree) and the self-play engine (lzlite.engine._engine). All wrap header-only C++17 cores that include no Python headers.
Set LZLITE_EXTS=zoo._zoo (comma-separated module names) to rebuild only some of them while developing.
"""
import glob
import os
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup

HERE = os.path.dirname(os.path.abspath(__file__))

if sys.platform == "win32":
    CXX_ARGS = ["/std:c++17", "/O2"]
else:
    CXX_ARGS = ["-std=c++17", "-O3", "-fno-strict-aliasing", "-Wno-unused-function"]

EXTENSIONS = [
    Extension(
        "zoo._zoo",
        ["zoo/_zoo.pyx"],
        include_dirs=[np.get_include(), "zoo"],
        depends=glob.glob("zoo/*/*.h"),
        language="c++",
        extra_compile_args=CXX_ARGS,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
    Extension(
        "zoo._bots",
        ["zoo/_bots.pyx"],
        include_dirs=[np.get_include(), "zoo"],
        depends=glob.glob("zoo/*/*.h"),
        language="c++",
        extra_compile_args=CXX_ARGS,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
    Extension(
        "lzlite.engine._engine",
        ["lzlite/engine/_engine.pyx"],
        include_dirs=[np.get_include(), "lzlite/engine"],
        depends=glob.glob("lzlite/engine/*.h") + glob.glob("lzlite/mcts/ctree/*.h"),
        language="c++",
        extra_compile_args=CXX_ARGS + ([] if sys.platform == "win32" else ["-pthread"]),
        extra_link_args=[] if sys.platform == "win32" else ["-pthread"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
    Extension(
        "lzlite.mcts.ctree._ctree",
        ["lzlite/mcts/ctree/_ctree.pyx"],
        include_dirs=[np.get_include(), "lzlite/mcts/ctree", "zoo"],
        depends=glob.glob("lzlite/mcts/ctree/*.h"),
        language="c++",
        extra_compile_args=CXX_ARGS,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
]


def _selected_extensions():
    only = [name.strip() for name in os.environ.get("LZLITE_EXTS", "").split(",") if name.strip()]
    exts = [e for e in EXTENSIONS if os.path.exists(os.path.join(HERE, e.sources[0]))]
    if only:
        exts = [e for e in exts if e.name in only]
    return exts


setup(
    name="lzlite",
    version="0.1.0",
    description="Fast, small MCTS-based RL toolkit: AlphaZero, MuZero, Gumbel MuZero, ReZero, UniZero",
    long_description=open(os.path.join(HERE, "README.md"), encoding="utf-8").read()
    if os.path.exists(os.path.join(HERE, "README.md"))
    else "",
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["lzlite", "lzlite.*", "zoo", "zoo.*"]),
    package_data={"zoo": ["*.h", "*/*.h", "*.pxd", "*.pyx"], "lzlite.mcts.ctree": ["*.h", "*.pyx", "*.pxd"],
                  "lzlite.engine": ["*.h", "*.pyx"]},
    ext_modules=cythonize(
        _selected_extensions(),
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False},
        quiet=True,
    ),
    install_requires=[
        "numpy>=1.24",
        "torch>=2.1",
        "easydict>=1.10",
        "tqdm>=4.60",
        "tensorboard>=2.12",
        "pyzmq>=25",  # actors and a learner (lzlite/cluster): episodes, weights and control over ZeroMQ
    ],
    extras_require={
        # the zoo-config tests run CartPole; the telemetry and bridge tests run W&B offline and a real Redis
        "test": ["pytest>=7", "gymnasium>=0.29", "wandb>=0.17", "redis>=5", "starlette>=0.37", "uvicorn>=0.29",
                 "websockets>=12"],
        "gym": ["gymnasium>=0.29"],
        "wandb": ["wandb>=0.17"],  # logger.wandb=True
        "redis": ["redis>=5"],  # logger.redis_url / --redis: live status for the web UI
        "webui": ["redis>=5", "starlette>=0.37", "uvicorn>=0.29", "websockets>=12"],  # python -m lzlite.webui
        "plot": ["matplotlib>=3.5"],  # benchmarks/plot_curves.py
    },
    zip_safe=False,
)

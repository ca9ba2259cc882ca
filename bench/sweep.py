"""Shape sweep: every workload family at tiny, prime, batch-1, tall, skinny and large shapes,
rulegrad beside PyTorch eager.

    python bench/sweep.py [--family NAME,...] [--rounds N] [--quick]
                          [--held-out | --held-out-other | --held-out-3 | --held-out-4 |
                           --held-out-5]
                          [POINT ...]

Per point: rulegrad's and torch eager's median wall time per call (inputs already in each
framework's arrays, the result read as a numpy array, interleaved rounds in one run), torch's
time over ours (> 1: rulegrad is faster), and the share of the machine's roof rulegrad reaches
(the measured FMA peak for products, the measured copy bandwidth for memory-bound cases).
rulegrad's side is called through `rulegrad.jit` (its kernels replayed, as a user who calls a
function many times would; `--no-jit` calls it directly). Outputs are checked against torch;
a mismatch is printed and counted. POINT (`family:AxBxC`, e.g. `mlp:64x1536x1536x10`) runs those
points instead of the tables'. Points under 0.1 ms are dominated by per-call latency and
are summarised apart. torch is bench-only (`pip install -e ".[bench]"`).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from harness import (
    close,
    copy_bandwidth,
    fma_peak,
    geomean,
    interleaved_medians,
    roof_share,
    torch_module,
)
from workloads import point

# family -> shapes: tiny, prime, batch 1, tall, skinny, large (and the issue's own cliffs)
SWEEP: dict[str, list[tuple]] = {
    "attention": [(1, 7, 4), (1, 97, 31), (1, 1024, 64), (2, 2048, 32), (16, 64, 128),
                  (8, 512, 64)],
    "mlp": [(4, 8, 16, 4), (61, 97, 53, 11), (1, 128, 256, 10), (512, 128, 128, 128),
            (32, 64, 128, 10), (256, 784, 512, 10)],
    "linear_gelu": [(3, 5, 7), (127, 131, 137), (1, 1024, 1024), (4096, 64, 64),
                    (64, 4096, 64), (128, 128, 128), (256, 1024, 1024)],
    "conv2d": [(1, 1, 5, 1, 3, 1), (1, 3, 64, 16, 7, 2), (1, 16, 31, 32, 3, 1),
               (32, 8, 16, 8, 3, 1), (1, 64, 56, 64, 3, 1), (16, 32, 32, 64, 3, 1)],
    "sum": [(0, 3, 5, 7), (1, 97, 1009), (1, 1, 1 << 20), (0, 8192, 33), (1, 33, 8192),
            (1, 2048, 2048), (0, 2048, 2048), (1, 64, 256, 256)],
    "max": [(2, 3, 5, 7), (1, 8192, 33), (0, 97, 1009), (1, 1, 1 << 20), (0, 33, 8192),
            (1, 64, 256, 256), (2, 64, 256, 256)],
    "layernorm": [(2, 3), (97, 1009), (1, 4096), (8192, 33), (33, 8192), (1024, 1024),
                  (65536, 5), (4096, 12)],
    "batchnorm": [(2, 3, 4), (8, 97, 13), (1, 16, 7), (64, 8, 64), (4, 256, 8),
                  (64, 64, 32)],
    "softmax": [(2, 3), (97, 1009), (1, 4096), (8192, 33), (33, 8192), (1024, 1024),
                (65536, 5), (4096, 12), (100000, 3)],
    # (issues 32/33's short rows: 65536 rows of 5, 4096 of 12, 100000 of 3, 4096 of 17)
    "logsumexp": [(2, 3), (97, 1009), (8192, 33), (65536, 5), (4096, 12), (100000, 3),
                  (4096, 17)],
}
# Shapes none of the work above was tuned on (`--held-out`), ten per family of products: batch 1
# (a matrix-vector product), k prime, 3 or 10 outputs, tall and thin, k of 4, large; one input
# channel, 1x1 and grouped (depthwise) convolutions, stride 2 at odd sizes; one-query and
# prime-length attention
HELD_OUT: dict[str, list[tuple]] = {
    "linear_gelu": [(1, 1021, 1024), (1, 4096, 1024), (2, 1024, 4096), (1021, 1021, 10),
                    (256, 512, 3), (100000, 16, 16), (4096, 4, 256), (1536, 1536, 1536),
                    (33, 257, 129), (7, 2048, 509)],
    "matmul": [(1, 1021, 1021), (1, 256, 8192), (3, 3, 3000), (100000, 16, 16), (512, 4, 512),
               (1021, 1021, 3), (2048, 2048, 1), (64, 1021, 64), (257, 257, 257),
               (1536, 1536, 1536)],
    "mlp": [(1, 784, 512, 10), (2, 1021, 509, 3), (10000, 16, 16, 16), (128, 4, 64, 10),
            (64, 1536, 1536, 10), (7, 300, 100, 10), (4096, 32, 32, 2), (257, 129, 65, 33),
            (1, 64, 1024, 1000), (512, 512, 512, 512)],
    "conv2d": [(1, 1, 28, 8, 5, 1), (1, 1, 127, 16, 3, 2), (8, 64, 14, 128, 1, 1),
               (1, 256, 7, 256, 1, 1), (2, 32, 33, 32, 3, 2), (1, 32, 56, 32, 3, 1, 32),
               (4, 64, 28, 64, 3, 1, 4), (1, 3, 225, 32, 3, 2), (16, 16, 15, 24, 5, 1),
               (1, 128, 28, 128, 3, 1)],
    "attention": [(1, 1, 64), (1, 1021, 64), (4, 257, 32), (1, 4096, 16), (32, 128, 8),
                  (1, 1536, 128), (12, 197, 64), (2, 1000, 80), (1, 33, 256), (64, 16, 64)],
}
# Non-product shapes none of the work above was tuned on (`--held-out-other`): reductions over
# each axis and over several (a bit mask of axes), scans, pooling at odd windows and strides,
# convolutions at odd shapes, attention at 1x1024x64, 4x77x64 and one query, broadcasts over
# non-contiguous axes, a permute before a reduce, gather/where/pad/cat; tiny, prime, batch 1,
# tall and skinny each
HELD_OUT_OTHER: dict[str, list[tuple]] = {
    "sum": [(0, 2, 3), (1, 1, 100003), (2, 8, 97, 33), (0, 10007, 17), (1, 17, 10007)],
    "max": [(1, 8192, 33), (0, 1, 65537), (2, 64, 127, 31), (0, 4099, 129)],
    "mean": [(1, 3, 5), (0, 1021, 257), (1, 16383, 9), (2, 32, 64, 129)],
    "var": [(1, 7, 3), (0, 2039, 65), (1, 1, 50021), (2, 64, 33, 257)],
    "argmax": [(1, 5, 3), (1, 8192, 33), (0, 1021, 509), (1, 1, 100003)],
    "sum_axes": [(6, 2, 3, 5), (5, 97, 31, 67), (3, 31, 61, 127), (6, 1, 64, 4096)],
    "max_axes": [(3, 33, 33, 65), (6, 8, 1021, 31)],
    "mean_axes": [(5, 16, 64, 28, 28), (13, 8, 32, 17, 17)],
    "var_axes": [(13, 8, 64, 15, 15), (6, 1, 257, 129)],
    "cumsum": [(0, 7), (1, 64, 1000), (0, 1000, 64), (1, 1, 8193), (1, 4096, 33),
               (0, 2000000), (0, 100003), (0, 1021, 1031), (1, 1021, 1031), (1, 2, 17, 3001)],
    "cummax": [(0, 7), (1, 64, 1000), (0, 1000, 64), (0, 100000), (0, 1000003), (1, 4096, 33)],
    "pool_max": [(1, 3, 7, 3, 2), (1, 64, 112, 3, 2), (8, 32, 33, 3, 3), (2, 16, 65, 5, 1)],
    "pool_avg": [(1, 1, 9, 3, 3), (4, 64, 56, 2, 2), (1, 32, 127, 7, 3), (2, 16, 63, 3, 1)],
    "conv2d": [(1, 3, 64, 16, 7, 2), (1, 3, 97, 8, 7, 2), (1, 64, 28, 32, 1, 1),
               (1, 3, 33, 5, 3, 1)],
    "attention": [(1, 1024, 64), (4, 77, 64), (1, 1, 64)],
    "bcast": [(2, 3, 5), (64, 1021, 33), (1, 4096, 255), (1021, 7, 257)],
    "permute_sum": [(3, 4, 5), (64, 257, 129), (1, 4097, 63), (1021, 31, 65)],
    "gather": [(4, 9, 3), (1024, 257, 64), (1, 100003, 16), (8192, 33, 33), (1, 1, 1),
               (1021, 1031, 17)],
    # gather along axis 0 (x (d, n), idx (k, n)) and embedding lookups (rows of a (v, d) table
    # at k indices): tiny, prime, tall, skinny, and a 50k x 256 table read at 4096 indices
    "gather0": [(1, 1, 1), (257, 1021, 64), (4096, 33, 33), (1, 100003, 16)],
    "embedding": [(50000, 256, 4096), (1, 1, 1), (10007, 61, 97), (1021, 1, 65537),
                  (64, 512, 1)],
    "where": [(3, 7), (1021, 1031), (1, 200003), (16383, 65)],
    "pad": [(1, 1, 5, 1), (8, 32, 55, 2), (1, 3, 223, 3)],
    "cat": [(2, 3, 4), (64, 97, 65), (1, 4093, 31)],
    "cat_last": [(3, 5), (256, 509), (1, 50021), (4099, 17)],
}
# A third set none of the work above was tuned on (`--held-out-3`), every family: products with
# relu/silu/gelu epilogues and a residual add (linear_act: m, k, n, act 0/1/2, residual), MLP
# blocks with layernorm, attention with one query, 4x77x64, (b, h, s, d) heads and a causal mask,
# convolutions with 3 input channels, 5x5, stride 2, dilation 2, padding, groups, batch 1 and
# 1x1, reductions along each axis and over several at prime lengths (97, 1009, 65521, 999983),
# normalizations (layernorm, batchnorm, groupnorm), softmax and logsumexp 10, 77, 1000 and 50257
# wide, pooling, broadcasts, transposes beside a reduce
HELD_OUT_3: dict[str, list[tuple]] = {
    "linear_act": [(1, 768, 3072, 2, 0), (197, 768, 768, 2, 1), (61, 509, 127, 0, 0),
                   (2048, 128, 512, 1, 0), (1, 1009, 97, 1, 1), (512, 256, 1024, 0, 1),
                   (9, 10, 11, 2, 0)],
    "mlp": [(77, 768, 3072, 768), (3, 50, 70, 5), (1, 1000, 500, 100), (2048, 64, 256, 64),
            (97, 97, 97, 97)],
    "attention": [(1, 1, 128), (4, 77, 64), (3, 509, 40)],
    "attention4": [(2, 2, 333, 80, 0), (1, 12, 77, 64, 1), (1, 8, 1, 64, 0), (2, 4, 256, 32, 1),
                   (1, 1, 1000, 64, 1)],
    "conv2d_full": [(1, 3, 224, 64, 7, 2, 1, 3, 1), (2, 3, 65, 16, 5, 2, 1, 2, 1),
                    (1, 16, 40, 16, 3, 1, 2, 2, 1), (1, 32, 28, 64, 3, 2, 1, 1, 4),
                    (4, 48, 17, 48, 5, 1, 1, 2, 48), (1, 96, 14, 24, 1, 1, 1, 0, 1),
                    (8, 3, 31, 8, 5, 1, 2, 0, 1)],
    "sum": [(0, 97, 1009), (1, 1009, 97), (0, 65521, 3), (1, 3, 65521), (0, 999983, 2),
            (1, 2, 999983), (1, 97, 10007)],
    "max": [(0, 1009, 97), (1, 65521, 7), (0, 7, 65521), (1, 1, 999983), (2, 5, 97, 1009)],
    "mean": [(0, 97, 97), (1, 1, 65521), (2, 3, 1009, 97), (0, 999983, 1)],
    "var": [(1, 97, 1009), (0, 65521, 5)],
    "sum_axes": [(5, 97, 13, 1009), (3, 1009, 97, 3), (6, 2, 97, 1009)],
    "max_axes": [(5, 13, 65521, 2)],
    "mean_axes": [(12, 7, 5, 97, 97), (7, 97, 3, 17)],
    "layernorm": [(77, 768), (4099, 97), (1, 65521), (10, 50257)],
    "batchnorm": [(1, 97, 13), (32, 3, 56), (5, 128, 7)],
    "groupnorm": [(2, 32, 16, 8), (1, 64, 28, 32), (8, 12, 7, 3), (1, 6, 97, 2)],
    "softmax": [(1000, 10), (1024, 77), (77, 1000), (8, 50257), (1, 50257)],
    "logsumexp": [(4096, 10), (512, 77), (1000, 1000), (4, 50257)],
    "pool_max": [(1, 64, 111, 3, 2), (4, 3, 97, 2, 2)],
    "pool_avg": [(2, 32, 57, 3, 2), (1, 96, 35, 5, 5)],
    "bcast": [(97, 1009, 3), (3, 1009, 97), (1, 65521, 7)],
    "permute_sum": [(97, 1009, 3), (3, 97, 1009)],
    "transpose_sum": [(7, 97, 1009), (64, 128, 128), (3, 1021, 509)],
    "elementwise": [(999983,), (65521,)],
}
# A fourth set none of the work above was tuned on (`--held-out-4`): attention with head dims 24,
# 80, 96 and 128 at odd sequence lengths, MLP blocks (layernorm, gelu, residual) at batch 1 and 3,
# int8 -> float products, silu/tanh/bias+residual epilogues, conv1d, depthwise, grouped, padded
# and dilated conv2d, pooling with stride != kernel, reductions over each 2 of 4 axes (masks 3,
# 5, 6, 9, 10, 12), normalizations over the last two axes, softmax over axis 0, broadcasts with
# 1-sized middle axes, float16 and float64 chains; each at tiny, prime, batch 1, tall, skinny and
# large shapes
HELD_OUT_4: dict[str, list[tuple]] = {
    "attention4": [(1, 1, 3, 24, 0), (1, 4, 101, 24, 1), (1, 8, 257, 80, 0), (2, 6, 77, 96, 1),
                   (1, 2, 999, 128, 0), (8, 16, 17, 128, 0), (1, 8, 511, 96, 1)],
    "mlp_block": [(1, 8, 16), (3, 97, 389), (1, 768, 3072), (3, 1024, 4096), (1000, 64, 256),
                  (3, 2048, 64), (512, 512, 2048)],
    "matmul_i8": [(2, 3, 5), (97, 101, 103), (1, 1024, 1024), (4096, 64, 64), (64, 4096, 64),
                  (512, 512, 512)],
    "linear_act": [(1, 512, 2048, 1, 1), (3, 1021, 509, 3, 0), (256, 384, 1536, 3, 1),
                   (7, 7, 7, 1, 0), (1000, 64, 64, 1, 1), (64, 2048, 128, 3, 0),
                   (1, 4096, 1024, 0, 1)],
    "conv1d": [(1, 1, 7, 1, 3, 1, 1, 0, 1), (1, 3, 1021, 16, 5, 1, 1, 2, 1),
               (8, 64, 255, 64, 3, 2, 1, 1, 1), (1, 128, 4096, 128, 3, 1, 2, 2, 1),
               (16, 32, 100, 32, 7, 1, 1, 3, 32), (4, 256, 61, 256, 1, 1, 1, 0, 1),
               (2, 64, 513, 64, 3, 1, 1, 1, 4)],
    "conv2d_full": [(1, 1, 7, 1, 3, 1, 1, 1, 1), (1, 64, 56, 64, 3, 1, 1, 1, 64),
                    (8, 32, 29, 32, 5, 2, 1, 2, 32), (2, 64, 28, 128, 3, 1, 1, 1, 8),
                    (1, 16, 63, 16, 3, 1, 3, 3, 1), (4, 8, 17, 16, 3, 1, 1, 1, 1),
                    (1, 24, 97, 24, 3, 2, 2, 2, 24)],
    "pool_max": [(1, 1, 8, 3, 1), (2, 16, 97, 2, 3), (1, 64, 112, 3, 1), (8, 32, 55, 4, 2),
                 (1, 3, 1021, 5, 2), (16, 128, 14, 3, 1)],
    "pool_avg": [(1, 1, 8, 3, 1), (2, 16, 97, 2, 3), (1, 64, 112, 3, 1), (8, 32, 55, 4, 2),
                 (1, 3, 1021, 5, 2), (16, 128, 14, 3, 1)],
    "sum_axes": [(3, 2, 3, 4, 5), (5, 7, 97, 13, 31), (6, 1, 257, 63, 65), (9, 64, 3, 5, 1021),
                 (10, 2, 509, 3, 509), (12, 16, 32, 64, 64)],
    "max_axes": [(3, 3, 2, 5, 4), (5, 97, 7, 31, 13), (6, 1, 63, 257, 65), (9, 1021, 5, 3, 64),
                 (10, 509, 2, 509, 3), (12, 64, 16, 32, 64)],
    "mean_axes": [(3, 33, 65, 7, 129), (6, 16, 127, 127, 3), (9, 8, 64, 64, 8)],
    "var_axes": [(5, 31, 8, 61, 17), (10, 4, 128, 9, 128), (12, 2, 3, 255, 257)],
    "norm2": [(2, 3, 5), (97, 13, 17), (1, 256, 256), (4096, 7, 9), (3, 509, 1021),
              (64, 64, 64)],
    "softmax0": [(3, 2), (1009, 97), (1, 4096), (8192, 33), (33, 8192), (1024, 1024)],
    "bcast4": [(2, 3, 4, 5), (7, 97, 13, 31), (1, 64, 256, 256), (1021, 3, 1, 257),
               (3, 1, 4096, 129), (16, 64, 32, 64)],
    "elementwise_dt": [(7, 16), (999983, 16), (1 << 22, 16), (7, 64), (65521, 64),
                       (1 << 22, 64)],
}
# A fifth set none of the work above was tuned on (`--held-out-5`): attention with odd heads,
# sequence lengths and head dims (3, 5, 7 heads; 45, 131, 1031 long; 40, 56, 72 wide), causal or
# not; MLP blocks and linear + bias + relu/silu/gelu (+ residual) at batch 1, prime and tall
# shapes; conv2d 7x7 stride 2, 1x1, dilated, grouped, depthwise and at batch 1; reductions down
# a middle axis and over several; batchnorm, layernorm, groupnorm and a two-axis norm; cumsum
# down each axis; max and avg pooling; broadcast chains; int8/int16 sums and float16 chains;
# each at tiny, prime, batch 1, tall, skinny and large shapes
HELD_OUT_5: dict[str, list[tuple]] = {
    "attention4": [(1, 1, 2, 8, 1), (1, 3, 45, 40, 1), (2, 5, 131, 56, 0), (3, 7, 67, 72, 1),
                   (1, 12, 384, 64, 1), (4, 2, 1031, 16, 0)],
    "mlp_block": [(1, 96, 384), (5, 211, 433), (2, 1536, 384), (4096, 32, 128),
                  (257, 320, 1280)],
    "linear_act": [(1, 640, 2560, 1, 1), (5, 257, 263, 0, 1), (2, 2048, 512, 2, 0),
                   (3000, 48, 96, 0, 0), (33, 1536, 96, 1, 1), (128, 768, 3072, 2, 1)],
    "conv2d_full": [(1, 3, 96, 32, 7, 2, 1, 3, 1), (1, 40, 19, 80, 1, 1, 1, 0, 1),
                    (3, 16, 37, 16, 3, 1, 3, 3, 4), (1, 12, 50, 36, 3, 2, 1, 1, 3),
                    (2, 128, 7, 128, 3, 1, 1, 1, 128), (1, 1, 61, 4, 5, 1, 1, 2, 1),
                    (16, 8, 12, 8, 7, 2, 1, 0, 1)],
    "sum_axes": [(2, 61, 127, 33), (2, 1, 4099, 7), (2, 509, 3, 1021), (2, 3, 2, 5),
                 (6, 7, 1031, 3, 9), (4, 5, 3, 577, 19)],
    "max_axes": [(2, 129, 129, 65), (2, 4, 31, 2047)],
    "mean_axes": [(2, 11, 997, 23), (6, 2, 61, 67, 3)],
    "var_axes": [(2, 257, 31, 17)],
    "layernorm": [(3, 1536), (257, 263), (16384, 24)],
    "batchnorm": [(3, 61, 11), (1, 512, 7), (128, 16, 9)],
    "groupnorm": [(1, 48, 19, 6), (4, 96, 7, 32), (3, 10, 33, 5)],
    "norm2": [(5, 31, 37), (1, 3, 4099)],
    "cumsum": [(0, 3), (1, 3, 131071), (0, 509, 257), (1, 8191, 3), (1, 7, 61, 127)],
    "pool_max": [(1, 5, 63, 3, 2), (4, 48, 29, 2, 1), (1, 96, 56, 3, 3)],
    "pool_avg": [(3, 8, 61, 4, 4), (1, 256, 13, 3, 1), (16, 3, 33, 2, 2)],
    "bcast4": [(3, 257, 7, 61), (1, 1, 99991, 3), (64, 3, 509, 5)],
    "bcast": [(7, 1021, 61), (1, 3, 65521)],
    "sum_int": [(8, 2, 61, 577, 9), (16, 1, 1031, 257), (8, 1, 3, 99991), (16, 5, 17, 3, 1021)],
    "elementwise_dt": [(3, 16), (131071, 16), (2097143, 16), (999331, 64)],
    "matmul_i8": [(1, 2048, 512), (509, 127, 257)],
}
SMALL = 1e-4  # seconds: below this a point measures per-call latency


def run_point(torch, p, rounds: int, jit: bool) -> dict:
    import rulegrad
    rg = rulegrad.jit(p.rg) if jit else p.rg
    ins_rg = {k: rulegrad.Tensor(v).realize() for k, v in p.inputs.items()}
    ins_t = {k: torch.from_numpy(v.copy()) for k, v in p.inputs.items()}
    with torch.no_grad():
        want = p.torch(**ins_t).numpy()
        got = rg(**ins_rg).numpy()
        ok = close(got, want, **p.tol)
        ours, theirs = interleaved_medians(
            [lambda: rg(**ins_rg).numpy(), lambda: p.torch(**ins_t).numpy()], rounds)
    return {"name": p.name, "ours": ours, "torch": theirs, "ok": ok,
            "roof": roof_share(p.flops, p.nbytes, ours)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", default="", help="comma-separated families (default: all)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="the first three shapes of each family")
    ap.add_argument("--no-jit", action="store_true",
                    help="call rulegrad directly, not through rulegrad.jit's replay")
    ap.add_argument("--held-out", action="store_true",
                    help="the held-out shapes (HELD_OUT) of the product families instead")
    ap.add_argument("--held-out-other", action="store_true",
                    help="the held-out shapes of the non-product families (HELD_OUT_OTHER)")
    ap.add_argument("--held-out-3", action="store_true",
                    help="the third held-out set (HELD_OUT_3), every family")
    ap.add_argument("--held-out-4", action="store_true",
                    help="the fourth held-out set (HELD_OUT_4), every family")
    ap.add_argument("--held-out-5", action="store_true",
                    help="the fifth held-out set (HELD_OUT_5), every family")
    ap.add_argument("points", nargs="*", help="family:AxBxC points instead of the tables'")
    args = ap.parse_args(argv)
    table = (HELD_OUT_5 if args.held_out_5 else HELD_OUT_4 if args.held_out_4
             else HELD_OUT_3 if args.held_out_3 else HELD_OUT_OTHER if args.held_out_other
             else HELD_OUT if args.held_out else SWEEP)
    if args.points:  # the points given, grouped by family in their order
        table = {}
        for spec in args.points:
            fam, shape = spec.split(":")
            table.setdefault(fam, []).append(tuple(map(int, shape.split("x"))))
        args.family = ""
    families = args.family.split(",") if args.family else list(table)
    unknown = sorted(set(families) - set(table))
    if unknown:
        ap.error(f"unknown family {', '.join(unknown)}; the families: {', '.join(table)}")
    torch = torch_module()
    if torch is None:
        print("bench/sweep.py needs torch: pip install -e '.[bench]'", file=sys.stderr)
        return 2
    print(f"roofs: FMA peak {fma_peak() / 1e9:.0f} GFLOP/s, copy {copy_bandwidth() / 1e9:.1f} "
          f"GB/s")
    print(f"{'point':<34} {'rulegrad ms':>11} {'torch ms':>9} {'speed':>7} {'roof':>6}")
    rows, bad = [], 0
    for family in families:
        shapes = table[family][:3] if args.quick else table[family]
        for shape in shapes:
            r = run_point(torch, point(family, *shape), args.rounds, not args.no_jit)
            rows.append(r)
            bad += not r["ok"]
            speed = r["torch"] / r["ours"]
            flag = "" if r["ok"] else "  WRONG"
            flag += "  SLOW" if speed < 1 / 1.5 and r["ours"] >= SMALL else ""
            print(f"{r['name']:<34} {r['ours'] * 1e3:>11.3f} {r['torch'] * 1e3:>9.3f} "
                  f"{speed:>6.2f}x {r['roof'] * 100:>5.0f}%{flag}", flush=True)
    big = [r["torch"] / r["ours"] for r in rows if r["ours"] >= SMALL]
    small = [r["torch"] / r["ours"] for r in rows if r["ours"] < SMALL]
    print(f"\ngeomean speed over torch eager: {geomean(big):.2f}x over {len(big)} points "
          f">= 0.1 ms; {geomean(small):.2f}x over {len(small)} points under 0.1 ms "
          f"(per-call latency); worst {min(big, default=float('nan')):.2f}x; {bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())

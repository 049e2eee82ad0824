// One-to-one Smith-Waterman (affine gaps) for batches of (query, target) pairs: score, end
// cell and, in reverse mode, start cell. Compiled by NVRTC once per variant:
//   -DROWS=R    query rows each thread keeps in registers (multiple of 4)
//   -DPACKED=1  two pairs per thread in s16x2 lanes (DPX), 0: one pair per thread at 32 bits
//
// Layout of the work: a group of G threads (a power of two up to 32, chosen per warp from
// the `warps` table, so one launch runs the bins of every G) aligns one pair per lane
// half. Thread t of a group owns query rows [pass*G*R + t*R, +R) and walks the
// target column by column; thread t works on column s - t at step s (a wavefront), getting
// the H and F values of the row above from thread t-1 by shuffle. Queries longer than G*R
// rows take several passes; the last row of a pass goes through `scratch` to the next.
//
// Scores come from a small per-thread profile in shared memory: for each residue code c,
// the R scores s(q_i, c) of the thread's rows as bytes (built once per pass, about 1% of
// the work), so one 16-byte load gives 16 rows' scores.
//
// Recurrences (gap of length k costs open + k*ext, oe = open + ext), with E and F kept
// offset by +oe so every update is one DPX add-max:
//   e*(i,j) = max(e*(i,j-1) - ext, H(i,j-1))            e* = E + oe
//   g(i,j)  = max(g(i-1,j) - ext, H(i-1,j))             g  = F + oe
//   H(i,j)  = max(0, H(i-1,j-1) + s, e* - oe, g - oe)
// All values stay in [-128, best + max score], so 16-bit lanes cannot wrap while the best
// stays under `overflow_limit` (= 32767 - max score); above it the pair is flagged and the
// host recomputes it with the 32-bit variant.
//
// Tie rule: each thread keeps its best (strictly greater only) in column order, with a
// snapshot of its column at that moment; the group reduces (score max, column min, row
// min). Reverse mode aligns the reversed prefixes q[0..qlen) t[0..tlen) (qlen = qend,
// tlen = tend): its first cell, in the same order, reaching the forward score is the start
// (see align.rs for why plain local alignment gives the anchored answer), and a group stops
// as soon as that cell is settled.

typedef unsigned int u32;
typedef unsigned char u8;

#ifndef ROWS
#define ROWS 16
#endif
#ifndef PACKED
#define PACKED 1
#endif

#define FULL 0xffffffffu
#define NONE 0x7fffffff

#if PACKED
#define HALVES 2
typedef u32 V;
__device__ __forceinline__ V splat(int x) { u32 h = (u32)x & 0xffffu; return h | (h << 16); }
__device__ __forceinline__ V addmax(V a, V b, V c) { return __viaddmax_s16x2(a, b, c); }
__device__ __forceinline__ V addmax_relu(V a, V b, V c) { return __viaddmax_s16x2_relu(a, b, c); }
__device__ __forceinline__ V max3(V a, V b, V c) { return __vimax3_s16x2_relu(a, b, c); }
__device__ __forceinline__ V max2(V a, V b) { return __vimax_s16x2_relu(a, b); }
__device__ __forceinline__ int lane_of(V v, int h) { return h ? (int)(short)(v >> 16) : (int)(short)(v & 0xffffu); }
// Byte k of wa into the low half and byte k of wb into the high half, sign-extended.
template <int K>
__device__ __forceinline__ V score_of(u32 wa, u32 wb) {
    u32 d;
    const u32 sel = (K) | ((K | 8) << 4) | ((4 + K) << 8) | ((4 + K) | 8) << 12;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(wa), "r"(wb), "r"(sel));
    return d;
}
#else
#define HALVES 1
typedef int V;
__device__ __forceinline__ V splat(int x) { return x; }
__device__ __forceinline__ V addmax(V a, V b, V c) { return __viaddmax_s32(a, b, c); }
__device__ __forceinline__ V addmax_relu(V a, V b, V c) { return __viaddmax_s32_relu(a, b, c); }
__device__ __forceinline__ V max3(V a, V b, V c) { return __vimax3_s32_relu(a, b, c); }
__device__ __forceinline__ V max2(V a, V b) { return __vimax_s32_relu(a, b); }
__device__ __forceinline__ int lane_of(V v, int) { return v; }
template <int K>
__device__ __forceinline__ V score_of(u32 wa, u32) {
    u32 d;
    const u32 sel = (K) | ((K | 8) << 4) | ((K | 8) << 8) | ((K | 8) << 12);
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(wa), "r"(0u), "r"(sel));
    return (int)d;
}
#endif

#define R ROWS
#define WORDS (R / 4)

template <int N>
struct Int {
    static constexpr int value = N;
};

// Calls f(Int<K>) for K = 0..N-1: K is a compile-time constant, as register arrays need.
template <int N>
struct Unroll {
    template <class F>
    __device__ __forceinline__ static void run(F&& f) {
        Unroll<N - 1>::run(f);
        f(Int<N - 1>());
    }
};
template <>
struct Unroll<0> {
    template <class F>
    __device__ __forceinline__ static void run(F&&) {}
};

struct Best {
    int score, col, row;
};

// Lexicographic: higher score, then smaller column, then smaller row.
__device__ __forceinline__ bool better(Best a, Best b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.col != b.col) return a.col < b.col;
    return a.row < b.row;
}

__device__ __forceinline__ Best group_best(Best b, int G) {
    for (int o = G >> 1; o > 0; o >>= 1) {
        Best x;
        x.score = __shfl_xor_sync(FULL, b.score, o, G);
        x.col = __shfl_xor_sync(FULL, b.col, o, G);
        x.row = __shfl_xor_sync(FULL, b.row, o, G);
        if (better(x, b)) b = x;
    }
    return b;
}

__device__ __forceinline__ int group_min(int v, int G) {
    for (int o = G >> 1; o > 0; o >>= 1) v = min(v, __shfl_xor_sync(FULL, v, o, G));
    return v;
}

// pairs[p] = (offset of query codes in seqs, offset of target codes, qlen, tlen).
// groups[g * HALVES + h] = pair index, or -1 for an empty slot.
// warps[w] = (G, first group of warp w, its scratch slot (multi-pass bins), groups in it):
// the warp's lanes form 32 / G groups of G threads; groups past the count are idle.
// out[p] = (score, row, column, flags) with 0-based row/column of the cell found (forward:
// end; reverse: in reversed coordinates); flags bit 0 = 16-bit overflow (recompute).
// Reverse mode reads the forward pass's out as `fwd` (same bins, launched after it on the
// same stream, so no host round trip): the prefixes end at its cell and its score is the
// goal; pairs with score 0 or the overflow flag are skipped (written as score 0).
extern "C" __global__ void align_pairs(const uint4* __restrict__ pairs, const int* __restrict__ groups,
                                       const int4* __restrict__ warps, int nwarps, const u8* __restrict__ seqs,
                                       const signed char* __restrict__ matrix, int nc1, int gap_oe,
                                       int gap_ext, int reverse, const int4* __restrict__ fwd,
                                       int overflow_limit, int4* __restrict__ out, u32* __restrict__ scratch,
                                       int scratch_stride) {
    extern __shared__ __align__(16) u8 smem[];
    const int msize = (nc1 * nc1 + 15) & ~15;
    signed char* mat = (signed char*)smem;
    u8* prof = smem + msize;
    for (int i = threadIdx.x; i < nc1 * nc1; i += blockDim.x) mat[i] = matrix[i];
    __syncthreads();

    const int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int4 task = w < nwarps ? warps[w] : make_int4(32, 0, 0, 0);
    const int G = task.x;  // uniform across the warp: shuffle widths and reductions use it
    const int t = (threadIdx.x & 31) % G;
    const int k = (threadIdx.x & 31) / G;
    const bool real_group = k < task.w;
    const int gid = task.y + k;
    const int pad = nc1 - 1;

    // Per half: sequences and lengths (empty slots and missing groups: length 0).
    const u8* qs[HALVES];
    const u8* ts[HALVES];
    int qlen[HALVES], tlen[HALVES], pidx[HALVES], goal[HALVES];
    int rows = 0, cols = 0;
#pragma unroll
    for (int h = 0; h < HALVES; ++h) {
        int p = real_group ? groups[gid * HALVES + h] : -1;
        pidx[h] = p;
        if (p >= 0) {
            uint4 d = pairs[p];
            qs[h] = seqs + d.x;
            ts[h] = seqs + d.y;
            qlen[h] = d.z;
            tlen[h] = d.w;
            goal[h] = NONE;
            if (reverse) {
                const int4 f = fwd[p];
                const bool found = f.x > 0 && !(f.w & 1);
                qlen[h] = found ? f.y + 1 : 0;
                tlen[h] = found ? f.z + 1 : 0;
                goal[h] = found ? f.x : 0;
            }
        } else {
            qs[h] = ts[h] = seqs;
            qlen[h] = tlen[h] = 0;
            goal[h] = 0;
        }
        rows = max(rows, qlen[h]);
        cols = max(cols, tlen[h]);
    }
    const int span = G * R;
    int passes = (rows + span - 1) / span;
    passes = __reduce_max_sync(FULL, passes);
    u32* scr_h = scratch + (size_t)(real_group ? task.z + k : 0) * 2 * scratch_stride;
    u32* scr_g = scr_h + scratch_stride;

    const V mext = splat(-gap_ext), moe = splat(-gap_oe), zero = splat(0), neg = splat(-32768);
    Best run[HALVES];
#pragma unroll
    for (int h = 0; h < HALVES; ++h) run[h] = Best{0, NONE, NONE};
    u32 overflow = 0;

    for (int pass = 0; pass < passes; ++pass) {
        const int row0 = pass * span + t * R;
        // Columns this pass needs: all, or in reverse mode those before a settled start.
        int pcols = cols;
        if (reverse) {
            int lim = 0;
#pragma unroll
            for (int h = 0; h < HALVES; ++h) {
                int l = run[h].score >= goal[h] ? run[h].col : tlen[h];
                lim = max(lim, min(l, tlen[h]));
            }
            pcols = lim;
        }

        // Profile: prof[((h * nc1 + c) * blockDim + tid) * R + r] = s(q[row0 + r], c).
        __syncwarp();
#pragma unroll
        for (int h = 0; h < HALVES; ++h) {
            u8 qc[R];
#pragma unroll
            for (int r = 0; r < R; ++r) {
                int i = row0 + r;
                qc[r] = i < qlen[h] ? qs[h][reverse ? qlen[h] - 1 - i : i] : (u8)pad;
            }
            for (int c = 0; c < nc1; ++c) {
                u32* dst = (u32*)(prof + ((size_t)(h * nc1 + c) * blockDim.x + threadIdx.x) * R);
#pragma unroll
                for (int w = 0; w < WORDS; ++w) {
                    u32 v = 0;
#pragma unroll
                    for (int b = 0; b < 4; ++b) v |= (u32)(u8)mat[qc[4 * w + b] * nc1 + c] << (8 * b);
                    dst[w] = v;
                }
            }
        }
        __syncwarp();

        V hcol[R], ecol[R], snap[R];
#pragma unroll
        for (int r = 0; r < R; ++r) {
            hcol[r] = zero;
            ecol[r] = zero;
            snap[r] = zero;
        }
        V best = zero;
        int bcol[HALVES];
#pragma unroll
        for (int h = 0; h < HALVES; ++h) bcol[h] = NONE;

        V send_h = zero, send_g = zero, diag_in = zero;
        u32 send_c = 0;
        // Lane 0 of the group reads target codes one step ahead.
        auto codes_at = [&](int j) -> u32 {
            u32 c = 0;
#pragma unroll
            for (int h = 0; h < HALVES; ++h) {
                u32 x = j < tlen[h] ? ts[h][reverse ? tlen[h] - 1 - j : j] : (u32)pad;
                c |= x << (8 * h);
            }
            return c;
        };
        u32 next_c = (t == 0 && pcols > 0) ? codes_at(0) : 0;

        int steps = pcols > 0 ? pcols + G - 1 : 0;
        steps = __reduce_max_sync(FULL, steps);
        bool done = pcols == 0;
        for (int s = 0; s < steps; ++s) {
            V in_h = (V)__shfl_up_sync(FULL, (u32)send_h, 1, G);
            V in_g = (V)__shfl_up_sync(FULL, (u32)send_g, 1, G);
            u32 in_c = __shfl_up_sync(FULL, send_c, 1, G);
            const int j = s - t;
            if (t == 0) {
                in_c = next_c;
                if (s + 1 < pcols) next_c = codes_at(s + 1);
                if (pass == 0) {
                    in_h = zero;
                    in_g = zero;
                } else if (j < pcols) {
                    in_h = (V)scr_h[j];
                    in_g = (V)scr_g[j];
                }
            }
            if (!done && j >= 0 && j < pcols) {
                const u32* pa = (const u32*)(prof + ((size_t)((in_c & 0xff)) * blockDim.x + threadIdx.x) * R);
                u32 wa[WORDS], wb[WORDS];
#if PACKED
                const u32* pb =
                    (const u32*)(prof + ((size_t)(nc1 + ((in_c >> 8) & 0xff)) * blockDim.x + threadIdx.x) * R);
#endif
#pragma unroll
                for (int w = 0; w < WORDS; ++w) wb[w] = 0;
                if constexpr (WORDS % 4 == 0) {
#pragma unroll
                    for (int w = 0; w < WORDS; w += 4) {
                        uint4 x = *(const uint4*)(pa + w);
                        wa[w] = x.x; wa[w + 1] = x.y; wa[w + 2] = x.z; wa[w + 3] = x.w;
#if PACKED
                        uint4 y = *(const uint4*)(pb + w);
                        wb[w] = y.x; wb[w + 1] = y.y; wb[w + 2] = y.z; wb[w + 3] = y.w;
#endif
                    }
                } else if constexpr (WORDS % 2 == 0) {
#pragma unroll
                    for (int w = 0; w < WORDS; w += 2) {
                        uint2 x = *(const uint2*)(pa + w);
                        wa[w] = x.x; wa[w + 1] = x.y;
#if PACKED
                        uint2 y = *(const uint2*)(pb + w);
                        wb[w] = y.x; wb[w + 1] = y.y;
#endif
                    }
                } else {
#pragma unroll
                    for (int w = 0; w < WORDS; ++w) {
                        wa[w] = pa[w];
#if PACKED
                        wb[w] = pb[w];
#endif
                    }
                }
                V diag = diag_in;  // H(row0 - 1, j - 1)
                V g = in_g;        // F(row0, j) + oe
                Unroll<R>::run([&](auto k) {
                    constexpr int r = decltype(k)::value;
                    const V old = hcol[r];
                    const V sc = score_of<r % 4>(wa[r / 4], wb[r / 4]);
                    ecol[r] = addmax(ecol[r], mext, old);
                    const V d = addmax(diag, sc, neg);
                    const V a = addmax_relu(ecol[r], moe, d);
                    const V hv = addmax(g, moe, a);
                    g = addmax(g, mext, hv);
                    hcol[r] = hv;
                    diag = old;
                });
                send_h = hcol[R - 1];
                send_g = g;
                // Column best of this thread's rows, then the strict-improvement test.
                V cm = hcol[0];
                Unroll<(R - 1) / 2>::run([&](auto k) {
                    constexpr int r = 1 + 2 * decltype(k)::value;
                    cm = max3(cm, hcol[r], hcol[r + 1]);
                });
                if ((R - 1) % 2) cm = max2(cm, hcol[R - 1]);
#if PACKED
                const bool up_lo = lane_of(cm, 0) > lane_of(best, 0), up_hi = lane_of(cm, 1) > lane_of(best, 1);
                if (up_lo || up_hi) {
                    const u32 m = (up_lo ? 0xffffu : 0u) | (up_hi ? 0xffff0000u : 0u);
#pragma unroll
                    for (int r = 0; r < R; ++r) snap[r] = (hcol[r] & m) | (snap[r] & ~m);
                    if (up_lo) bcol[0] = j;
                    if (up_hi) bcol[1] = j;
                    best = max2(best, cm);
                }
#else
                if (cm > best) {
#pragma unroll
                    for (int r = 0; r < R; ++r) snap[r] = hcol[r];
                    bcol[0] = j;
                    best = cm;
                }
#endif
                if (t == G - 1 && pass + 1 < passes) {
                    scr_h[j] = (u32)send_h;
                    scr_g[j] = (u32)send_g;
                }
            }
            diag_in = in_h;
            send_c = in_c;
            // Reverse mode: stop once every half's first column reaching the goal is
            // settled, i.e. the last thread of the group has passed it.
            if (reverse && (s & 7) == 7) {
                bool all = true;
#pragma unroll
                for (int h = 0; h < HALVES; ++h) {
                    int f = lane_of(best, h) >= goal[h] ? bcol[h] : NONE;
                    f = group_min(f, G);
                    if (goal[h] > 0 && !(s - (G - 1) >= f)) all = false;
                }
                done = done || all;
                if (__all_sync(FULL, done)) break;
            }
        }

        // This pass's best per half, then merged into the running best.
#pragma unroll
        for (int h = 0; h < HALVES; ++h) {
            Best b{lane_of(best, h), bcol[h], NONE};
            if (b.score > 0) {
#pragma unroll
                for (int r = R - 1; r >= 0; --r)
                    if (lane_of(snap[r], h) == b.score) b.row = row0 + r;
            } else {
                b = Best{0, NONE, NONE};
            }
            b = group_best(b, G);
            if (better(b, run[h])) run[h] = b;
        }
#pragma unroll
        for (int h = 0; h < HALVES; ++h)
            if (lane_of(best, h) > overflow_limit) overflow |= 1u << h;
        __syncwarp();
    }

    // A half that overflowed in any thread of the group is flagged for its own pair.
    for (int o = G >> 1; o > 0; o >>= 1) overflow |= __shfl_xor_sync(FULL, overflow, o, G);
    if (real_group && t == 0) {
#pragma unroll
        for (int h = 0; h < HALVES; ++h) {
            if (pidx[h] < 0) continue;
            Best b = run[h];
            if (b.score <= 0) b = Best{0, -1, -1};
            out[pidx[h]] = make_int4(b.score, b.row, b.col, (int)((overflow >> h) & 1u));
        }
    }
}

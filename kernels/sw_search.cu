// Smith-Waterman database search (scores only), affine gaps, packed s16x2 arithmetic.
//
// Layout of the work (see src/engine/cuda/search.rs for the host side):
// - Two queries are packed into the two 16-bit halves of every cell ("lane A" and "lane B"),
//   so one alignment step computes the cells of two queries against one target.
// - A subwarp of P threads owns one target. Thread t holds K consecutive query rows in
//   registers (H and E of each row); the P threads together hold R = P*K rows, one "pass".
//   The target streams through the subwarp: at step s thread t works on target column s - t,
//   receiving the H and F of the row above (and the residue) from thread t-1 by shuffle.
// - Queries longer than R take several passes; the bottom row (H, F) of a pass is written
//   to a per-subwarp buffer in global memory and read back as the top row of the next pass.
// - The query-pair profile of one pass lives in shared memory, laid out so that each thread
//   reads its K scores for a residue with K/4 conflict-free 16-byte loads.
// - Biased values: every H, E and F is stored plus B = open + extend, and H is clamped at B
//   (the local-alignment zero). Then H - (open + extend) never goes below zero in either
//   half, so it is a plain 32-bit subtraction (no borrow between the halves) that can run
//   outside the DPX unit: per cell pair 4.5 DPX operations instead of 5.5.
// - Overflow: every cell is at most T + smax while all earlier cells are at most T, so a
//   lane whose maximum ends above T (= 32767 - smax - B, unbiased) may have wrapped; it is
//   reported as 0xFFFF and the host recomputes that pair exactly at 32 bits. Clamping at B
//   keeps even a wrapped lane at or above B, so the other lane never sees a borrow.
//
// NVRTC has no standard headers: plain int / unsigned only.

typedef unsigned int u32;
typedef unsigned char u8;

#define FULL_MASK 0xffffffffu

// Parameters shared by every search kernel; passed by value.
struct SearchArgs {
    const u8* residues;      // target residue codes; each target starts 4-byte aligned,
                             // padded with the PAD code up to a multiple of 4
    const u32* starts;       // byte offset of each target in `residues`
    const u32* lengths;      // residues of each target (ascending in [tbegin, tend))
    const int* profiles;     // query-pair profiles, one block of passes per pair
    const u32* pair_offset;  // start of each pair's profile in `profiles` (ints)
    const u32* pair_passes;  // passes (R-row tiles) of each pair
    u32* scores;             // [pair * ntargets + target]: lane A | lane B << 16
    int* scratch;            // boundary rows: per (block, subwarp) two buffers of maxcols int2
    u32* counter;            // work counter, zero before the launch
    u32 tbegin, tend;        // the targets this launch covers
    u32 ntargets;            // stride of `scores`
    u32 npairs;
    u32 maxcols;             // int2 entries per boundary buffer (>= padded target length)
    u32 alpha;               // profile rows per pass tile: alphabet size + 1 (PAD)
    u32 oe;                  // open + extend in both halves: also the bias B
    u32 neg_ext;             // -extend in both halves
    int threshold;           // T (unbiased): a lane maximum above this may have overflowed
};

__device__ __forceinline__ u32 max_relu(u32 a, u32 b) { return __vimax_s16x2_relu(a, b); }

// One pass of one subwarp over its target: rows [pass*R, pass*R + R) of its query pair.
template <int P, int K>
__device__ __forceinline__ u32 run_pass(const SearchArgs& a, const int* __restrict__ prof, u32 start,
                                        u32 lpad, u32 steps, bool first, bool last,
                                        const int2* __restrict__ bin, int2* __restrict__ bout,
                                        u32 pad_code4, u32 m) {
    const int t = threadIdx.x % P;
    constexpr int R = P * K;
    u32 H[K], E[K];
#pragma unroll
    for (int r = 0; r < K; ++r) {
        H[r] = a.oe;  // H = 0, biased
        E[r] = 0;  // E = -(open + extend), biased
    }
    // Values this thread hands to thread t+1 (its bottom row at its last column).
    u32 code = pad_code4 & 0xff, hout = a.oe, fout = 0;
    u32 hdiag = a.oe;  // H of the row above this thread's first row, previous column
    const int* prow_base = prof + t * 4;

    // Thread 0 prefetches residues and boundary values one 4-column block ahead.
    u32 res_next = pad_code4;
    int4 b_next0 = make_int4((int)a.oe, 0, (int)a.oe, 0), b_next1 = b_next0;
    if (t == 0) {
        if (lpad > 0) res_next = *(const u32*)(a.residues + start);
        if (!first && lpad > 0) {
            b_next0 = *(const int4*)(bin);
            b_next1 = *(const int4*)(bin + 2);
        }
    }
    for (u32 s0 = 0; s0 < steps; s0 += 4) {
        const u32 res = res_next;
        const int4 b0 = b_next0, b1 = b_next1;
        const u32 nc = s0 + 4;
        if (t == 0) {
            res_next = pad_code4;
            b_next0 = make_int4((int)a.oe, 0, (int)a.oe, 0);
            b_next1 = b_next0;
            if (nc < lpad) {
                res_next = *(const u32*)(a.residues + start + nc);
                if (!first) {
                    b_next0 = *(const int4*)(bin + nc);
                    b_next1 = *(const int4*)(bin + nc + 2);
                }
            }
        }
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const u32 c_up = __shfl_up_sync(FULL_MASK, code, 1, P);
            const u32 h_up = __shfl_up_sync(FULL_MASK, hout, 1, P);
            const u32 f_up = __shfl_up_sync(FULL_MASK, fout, 1, P);
            const int bh = u == 0 ? b0.x : u == 1 ? b0.z : u == 2 ? b1.x : b1.z;
            const int bf = u == 0 ? b0.y : u == 1 ? b0.w : u == 2 ? b1.y : b1.w;
            const u32 cc = t == 0 ? (res >> (8 * u)) & 0xff : c_up;
            const u32 hin = t == 0 ? (u32)bh : h_up;
            u32 f = t == 0 ? (u32)bf : f_up;
            const int* prow = prow_base + cc * R;
            u32 diag = hdiag;
#pragma unroll
            for (int i = 0; i < K / 4; ++i) {
                const int4 sc = *(const int4*)(prow + i * P * 4);
                const u32 sv[4] = {(u32)sc.x, (u32)sc.y, (u32)sc.z, (u32)sc.w};
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int r = 4 * i + e;
                    const u32 h = __vimax3_s16x2(__viaddmax_s16x2(diag, sv[e], E[r]), f, a.oe);
                    diag = H[r];
                    H[r] = h;
                    const u32 hoe = h - a.oe;  // both halves >= 0: no borrow
                    E[r] = __viaddmax_s16x2(E[r], a.neg_ext, hoe);
                    f = __viaddmax_s16x2(f, a.neg_ext, hoe);
                }
                m = __vimax3_s16x2_relu(m, H[4 * i], H[4 * i + 1]);
                m = __vimax3_s16x2_relu(m, H[4 * i + 2], H[4 * i + 3]);
            }
            hdiag = hin;
            code = cc;
            hout = H[K - 1];
            fout = f;
            if (!last && t == P - 1) {
                const int col = (int)(s0 + u) - (P - 1);
                if (col >= 0 && col < (int)lpad) bout[col] = make_int2((int)hout, (int)fout);
            }
        }
    }
    return m;
}

template <int P, int K>
__device__ void search(const SearchArgs& a) {
    constexpr int BLOCK = 128;
    constexpr int W = BLOCK / P;  // targets (subwarps) per block
    constexpr int R = P * K;
    extern __shared__ int4 smem4[];
    int* prof = (int*)smem4;
    __shared__ u32 s_item;

    const int sw = threadIdx.x / P, t = threadIdx.x % P;
    const u32 n = a.tend - a.tbegin;
    const u32 ngroups = (n + W - 1) / W;
    const u32 nitems = ngroups * a.npairs;
    const u32 pad4 = (a.alpha - 1) * 0x01010101u;  // four PAD codes
    int2* buf0 = (int2*)a.scratch + (size_t)(blockIdx.x * W + sw) * 2 * a.maxcols;
    int2* buf1 = buf0 + a.maxcols;

    for (;;) {
        __syncthreads();
        if (threadIdx.x == 0) s_item = atomicAdd(a.counter, 1u);
        __syncthreads();
        const u32 item = s_item;
        if (item >= nitems) break;
        // Longest groups first (targets ascend by length), all pairs of a group together.
        const u32 g = ngroups - 1 - item / a.npairs;
        const u32 pair = item % a.npairs;
        const u32 first_t = a.tbegin + g * W;
        const u32 last_t = min(first_t + W, a.tend) - 1;
        const u32 me = first_t + sw;
        const bool active = me <= last_t;
        const u32 len = active ? a.lengths[me] : 0;
        const u32 lpad = (len + 3) & ~3u;
        const u32 start = active ? a.starts[me] : 0;
        // Every subwarp of the block steps together (shuffles span the warp): as many
        // steps as the longest target of the group needs, so that the last thread also
        // writes every padded column of the boundary row (P is a multiple of 4).
        const u32 steps = ((a.lengths[last_t] + 3) & ~3u) + P;
        const u32 passes = a.pair_passes[pair];
        const int* pp = a.profiles + a.pair_offset[pair];
        u32 m = 0;
        for (u32 pass = 0; pass < passes; ++pass) {
            __syncthreads();
            const int4* src = (const int4*)(pp + (size_t)pass * a.alpha * R);
            for (u32 i = threadIdx.x; i < a.alpha * R / 4; i += BLOCK) smem4[i] = src[i];
            __syncthreads();
            const int2* bin = (pass & 1) ? buf1 : buf0;
            int2* bout = (pass & 1) ? buf0 : buf1;
            m = run_pass<P, K>(a, prof, start, lpad, steps, pass == 0, pass + 1 == passes, bin, bout, pad4, m);
        }
#pragma unroll
        for (int o = P / 2; o > 0; o /= 2) m = max_relu(m, __shfl_xor_sync(FULL_MASK, m, o, P));
        if (t == 0 && active) {
            const u32 bias = a.oe & 0xffff;
            u32 lo = (m & 0xffff) - bias, hi = (m >> 16) - bias;
            if ((int)lo > a.threshold) lo = 0xffff;
            if ((int)hi > a.threshold) hi = 0xffff;
            a.scores[(size_t)pair * a.ntargets + me] = lo | (hi << 16);
        }
    }
}

// Minimum resident blocks per SM the register allocation must allow. 3 (12 warps per SM)
// lets K=32 fit in 168 registers without spills; unbounded it takes 239 and runs 2 blocks.
// Measured on the H100 (BENCHMARKS.md): K=32 at 3 blocks is the fastest configuration.
#ifndef SEARCH_MIN_BLOCKS
#define SEARCH_MIN_BLOCKS 3
#endif

// The variant: THREADS per target (P), ROWS per thread (K), chosen by -D options
// (src/engine/cuda/kernels.rs lists the variants compiled).
#ifndef THREADS
#define THREADS 8
#endif
#ifndef ROWS
#define ROWS 32
#endif

extern "C" __global__ void __launch_bounds__(128, SEARCH_MIN_BLOCKS) sw_search(const SearchArgs a) {
    search<THREADS, ROWS>(a);
}

// ---- Top-k on the GPU -----------------------------------------------------------------
// Scores of query q (lane q & 1 of pair q >> 1) are bucketed by min(score, BINS - 1); the
// threshold is the highest bucket whose suffix count reaches k, and only hits at or above
// it are compacted and copied back. The host ranks those exactly.

#define BINS 4096

__device__ __forceinline__ u32 lane_score(const u32* scores, u32 ntargets, u32 q, u32 i) {
    const u32 v = scores[(size_t)(q >> 1) * ntargets + i];
    return (q & 1) ? v >> 16 : v & 0xffff;
}

// grid (blocks, queries); hist is [queries][BINS], zeroed before.
extern "C" __global__ void topk_hist(const u32* scores, u32 ntargets, u32* hist) {
    __shared__ u32 h[BINS];
    const u32 q = blockIdx.y;
    for (u32 i = threadIdx.x; i < BINS; i += blockDim.x) h[i] = 0;
    __syncthreads();
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < ntargets; i += gridDim.x * blockDim.x) {
        const u32 s = lane_score(scores, ntargets, q, i);
        atomicAdd(&h[min(s, (u32)(BINS - 1))], 1u);
    }
    __syncthreads();
    for (u32 i = threadIdx.x; i < BINS; i += blockDim.x)
        if (h[i]) atomicAdd(&hist[(size_t)q * BINS + i], h[i]);
}

// One block per query: threshold[q] = highest bin b >= 1 with count(score >= b) >= k.
extern "C" __global__ void topk_threshold(const u32* hist, u32 k, u32* threshold) {
    __shared__ u32 sums[BINS / 32];
    const u32 q = blockIdx.x;
    const u32* h = hist + (size_t)q * BINS;
    // Each of 128 threads sums 32 bins, then thread 0 walks the partial sums down.
    for (u32 c = threadIdx.x; c < BINS / 32; c += blockDim.x) {
        u32 s = 0;
        for (u32 j = 0; j < 32; ++j) s += h[c * 32 + j];
        sums[c] = s;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        u32 acc = 0, th = 1;
        for (int c = BINS / 32 - 1; c >= 0; --c) {
            if (acc + sums[c] >= k) {
                for (int b = c * 32 + 31; b >= c * 32; --b) {
                    acc += h[b];
                    if (acc >= k) {
                        th = (u32)b;
                        break;
                    }
                }
                break;
            }
            acc += sums[c];
        }
        threshold[q] = th < 1 ? 1 : th;
    }
}

// grid (blocks, queries): hits with score >= threshold go to out[q][...] as (target, score).
extern "C" __global__ void topk_select(const u32* scores, u32 ntargets, const u32* threshold, u32 cap,
                                       u32* count, uint2* out) {
    const u32 q = blockIdx.y;
    const u32 th = threshold[q];
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < ntargets; i += gridDim.x * blockDim.x) {
        const u32 s = lane_score(scores, ntargets, q, i);
        if (s >= th) {
            const u32 pos = atomicAdd(&count[q], 1u);
            if (pos < cap) out[(size_t)q * cap + pos] = make_uint2(i, s);
        }
    }
}

// Smith-Waterman database search (scores only), affine gaps, packed s16x2 arithmetic.
//
// Layout of the work (see src/engine/cuda/search.rs and layout.rs for the host side):
// - Queries are packed into two "lanes", the two 16-bit halves of every cell, so one
//   alignment step computes the cells of two query rows against one target. Each lane is a
//   stream of queries laid end to end, every query starting on a block of K rows (the rows
//   one thread holds); a "strand" is a pair of such lanes, cut into passes of R = P*K rows.
//   Packing by total length leaves only the last block of each query and the end of each
//   strand padded (about 1-3% of the rows, against 10-25% for one query pair per tile).
// - A subwarp of P threads owns one target. Thread t holds K consecutive strand rows in
//   registers (H and E of each row); the target streams through the subwarp: at step s
//   thread t works on target columns 2(s - t) and 2(s - t) + 1 (`COLS`), receiving the H
//   and F of the row above (and the residues) from thread t-1 by shuffle. Where a lane's query starts at a thread's first row
//   (`blocks` says so), that lane's incoming H and F are replaced by the boundary values.
// - A strand longer than R rows takes several passes; the bottom row (H, F) of a pass is
//   written to a per-subwarp buffer in global memory and read back as the top row of the
//   next pass.
// - Scores: each thread keeps the maximum of its rows; at the end of a pass the threads of
//   one query reduce theirs (a segmented scan over the subwarp), the maximum of a query
//   that goes on into the next pass is carried to its thread 0, and the thread holding a
//   query's last block writes its score.
// - The strand profile of one pass lives in shared memory, laid out so that each thread
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
    const int* profiles;     // strand profiles: per pass (of every strand in turn) alpha x R ints
    const uint2* blocks;     // per pass and thread: the query block of lane A and lane B
    const u32* first_pass;   // index of each strand's first pass in `profiles` and `blocks`
    const u32* strand_passes;  // passes (R-row tiles) of each strand
    unsigned short* scores;  // [query slot * ntargets + target]
    int* scratch;            // boundary rows: per (block, subwarp) two buffers of maxcols int2
    u32* counter;            // work counter, zero before the launch
    u32 tbegin, tend;        // the targets this launch covers
    u32 ntargets;            // stride of `scores`
    u32 nstrands;
    u32 maxcols;             // int2 entries per boundary buffer (>= padded target length)
    u32 alpha;               // profile rows per pass tile: alphabet size + 1 (PAD)
    u32 oe;                  // open + extend in both halves: also the bias B
    u32 neg_ext;             // -extend in both halves
    int threshold;           // T (unbiased): a lane maximum above this may have overflowed
};

__device__ __forceinline__ u32 max_relu(u32 a, u32 b) { return __vimax_s16x2_relu(a, b); }

// A lane's query block (one u32 of `blocks`): the query's slot, and whether this block is
// the query's first (the rows above belong to another query) and last (it ends here).
#define BLOCK_SLOT 0x3fffffffu
#define BLOCK_NONE 0x3fffffffu  // padding rows, no query
#define BLOCK_START 0x40000000u
#define BLOCK_END 0x80000000u

// Both halves: 0xffff where the lane's query goes on from the rows above, else 0.
__device__ __forceinline__ u32 continues(uint2 d) {
    return ((d.x & BLOCK_START) ? 0u : 0xffffu) | ((d.y & BLOCK_START) ? 0u : 0xffff0000u);
}

// Two columns per step (thread t on columns 2(s - t) and 2(s - t) + 1): the second
// column's row r needs only the first's rows r - 1 and r, so the two dependency chains
// down the rows interleave, and the shuffles and residue handling are paid per two
// columns. H100, K=32, 200M database resident: 5.72 / 5.78 TCUPS (20 / 500 queries)
// against 5.59 / 5.63 with one column per step (8265881); same 167 registers.
#define COLS 2

// One column of a thread's K rows: H and E in place; `diag` enters as H(row0 - 1, j - 1),
// `f` as F(row0, j) and leaves as F(row0 + K, j); `m` takes the column's maximum.
template <int P, int K>
__device__ __forceinline__ void column(const int* __restrict__ prow, u32 diag, u32& f, u32 (&H)[K], u32 (&E)[K],
                                       u32& m, u32 oe, u32 neg_ext) {
#pragma unroll
    for (int i = 0; i < K / 4; ++i) {
        const int4 sc = *(const int4*)(prow + i * P * 4);
        const u32 sv[4] = {(u32)sc.x, (u32)sc.y, (u32)sc.z, (u32)sc.w};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int r = 4 * i + e;
            const u32 h = __vimax3_s16x2(__viaddmax_s16x2(diag, sv[e], E[r]), f, oe);
            diag = H[r];
            H[r] = h;
            const u32 hoe = h - oe;  // both halves >= 0: no borrow
            E[r] = __viaddmax_s16x2(E[r], neg_ext, hoe);
            f = __viaddmax_s16x2(f, neg_ext, hoe);
        }
        m = __vimax3_s16x2_relu(m, H[4 * i], H[4 * i + 1]);
        m = __vimax3_s16x2_relu(m, H[4 * i + 2], H[4 * i + 3]);
    }
}

// One pass of one subwarp, two columns per step: rows [pass*R, pass*R + R) of the query.
// `Lanes` says what the two 16-bit halves hold (the search's two query strands against one
// target, `StrandLanes`; the paired kernel's two targets against one query, `TargetLanes`):
// the residue codes of each step, the boundary values entering row 0, a column's cells.
// `lpad` is the padded length of the longest lane; `steps` counts steps of two columns.
template <int P, int K, class Lanes>
__device__ __forceinline__ void run_pass(Lanes& ln, u32 oe, u32 lpad, u32 steps, bool first, bool last,
                                         const int2* __restrict__ bin, int2* __restrict__ bout) {
    const int t = threadIdx.x % P;
    u32 H[K], E[K];
#pragma unroll
    for (int r = 0; r < K; ++r) {
        H[r] = oe;
        E[r] = 0;
    }
    u32 code = ln.pad_codes(), hout0 = oe, fout0 = 0, hout1 = oe, fout1 = 0;
    u32 hdiag = oe;
    int4 b_next0 = make_int4((int)oe, 0, (int)oe, 0), b_next1 = b_next0;
    if (t == 0) {
        ln.fetch(0);
        if (!first && lpad > 0) {
            b_next0 = *(const int4*)(bin);
            b_next1 = *(const int4*)(bin + 2);
        }
    }
    for (u32 s0 = 0; s0 < steps; s0 += 2) {
        ln.advance();
        const int4 b0 = b_next0, b1 = b_next1;
        const u32 nc = 2 * s0 + 4;  // first column of the next residue word
        if (t == 0) {
            ln.fetch(nc);
            b_next0 = make_int4((int)oe, 0, (int)oe, 0);
            b_next1 = b_next0;
            if (!first && nc < lpad) {
                b_next0 = *(const int4*)(bin + nc);
                b_next1 = *(const int4*)(bin + nc + 2);
            }
        }
#pragma unroll
        for (int u = 0; u < 2; ++u) {
            const u32 c_up = __shfl_up_sync(FULL_MASK, code, 1, P);
            const u32 h0_up = __shfl_up_sync(FULL_MASK, hout0, 1, P);
            const u32 f0_up = __shfl_up_sync(FULL_MASK, fout0, 1, P);
            const u32 h1_up = __shfl_up_sync(FULL_MASK, hout1, 1, P);
            const u32 f1_up = __shfl_up_sync(FULL_MASK, fout1, 1, P);
            const int4 b = u == 0 ? b0 : b1;
            const u32 cc = t == 0 ? ln.codes(u) : c_up;
            const u32 hin0 = ln.h_in(t == 0 ? (u32)b.x : h0_up);
            const u32 hin1 = ln.h_in(t == 0 ? (u32)b.z : h1_up);
            u32 f0 = ln.f_in(t == 0 ? (u32)b.y : f0_up);
            u32 f1 = ln.f_in(t == 0 ? (u32)b.w : f1_up);
            const int col = 2 * ((int)(s0 + u) - t);
            ln.column(cc, 0, hdiag, f0, H, E, col);
            const u32 hk0 = H[K - 1];
            ln.column(cc, 1, hin0, f1, H, E, col + 1);
            hdiag = hin1;
            code = cc;
            hout0 = hk0;
            fout0 = f0;
            hout1 = H[K - 1];
            fout1 = f1;
            if (!last && t == P - 1) {
                if (col >= 0 && col < (int)lpad) *(int4*)(bout + col) = make_int4((int)hout0, (int)fout0, (int)hout1, (int)fout1);
            }
        }
    }
}

// The search's lanes: one target, the query's two strands in the halves (a half whose
// strand does not go on from the pass before is reset by `keep`); `m` takes the maxima.
template <int P, int K>
struct StrandLanes {
    const u8* residues;
    const int* prow;  // the thread's first profile entry
    u32 start, lpad, pad4, keep, reset, oe, neg_ext;
    u32 m;
    u32 res, res_next;
    __device__ __forceinline__ u32 pad_codes() const { return pad4 & 0xffff; }
    __device__ __forceinline__ void fetch(u32 nc) {
        res_next = nc < lpad ? *(const u32*)(residues + start + nc) : pad4;
    }
    __device__ __forceinline__ void advance() { res = res_next; }
    // The codes of the step's two columns, one a byte.
    __device__ __forceinline__ u32 codes(int u) const { return (res >> (16 * u)) & 0xffff; }
    __device__ __forceinline__ u32 h_in(u32 h) const { return (h & keep) | reset; }
    __device__ __forceinline__ u32 f_in(u32 f) const { return f & keep; }
    __device__ __forceinline__ void column(u32 cc, int c, u32 diag, u32& f, u32 (&H)[K], u32 (&E)[K], int) {
        ::column<P, K>(prow + ((cc >> (8 * c)) & 0xff) * (P * K), diag, f, H, E, m, oe, neg_ext);
    }
};

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
    const u32 nitems = ngroups * a.nstrands;
    const u32 pad4 = (a.alpha - 1) * 0x01010101u;  // four PAD codes
    const u32 bias = a.oe & 0xffff;
    int2* buf0 = (int2*)a.scratch + (size_t)(blockIdx.x * W + sw) * 2 * a.maxcols;
    int2* buf1 = buf0 + a.maxcols;

    for (;;) {
        __syncthreads();
        if (threadIdx.x == 0) s_item = atomicAdd(a.counter, 1u);
        __syncthreads();
        const u32 item = s_item;
        if (item >= nitems) break;
        // Longest groups first (targets ascend by length), all strands of a group together.
        const u32 g = ngroups - 1 - item / a.nstrands;
        const u32 strand = item % a.nstrands;
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
        const u32 steps = ((a.lengths[last_t] + 3) & ~3u) / COLS + P;
        const u32 passes = a.strand_passes[strand];
        const u32 p0 = a.first_pass[strand];
        u32 carry = 0;  // the running maximum of the queries going on into the next pass
        for (u32 pass = 0; pass < passes; ++pass) {
            __syncthreads();
            const int4* src = (const int4*)(a.profiles + (size_t)(p0 + pass) * a.alpha * R);
            for (u32 i = threadIdx.x; i < a.alpha * R / 4; i += BLOCK) smem4[i] = src[i];
            const uint2 d = a.blocks[(size_t)(p0 + pass) * P + t];
            __syncthreads();
            const u32 keep = continues(d);
            const int2* bin = (pass & 1) ? buf1 : buf0;
            int2* bout = (pass & 1) ? buf0 : buf1;
            u32 m = t == 0 ? carry & keep : 0u;
            StrandLanes<P, K> ln{a.residues, prof + t * 4, start, lpad, pad4, keep, a.oe & ~keep, a.oe, a.neg_ext, m};
            run_pass<P, K>(ln, a.oe, lpad, steps, pass == 0, pass + 1 == passes, bin, bout);
            m = ln.m;
            // Segmented inclusive scan: each thread takes the maxima of the threads above it
            // that hold the same query (a query's blocks in a pass are consecutive threads).
#pragma unroll
            for (int o = 1; o < P; o *= 2) {
                const u32 v = __shfl_up_sync(FULL_MASK, m, o, P);
                const u32 ux = __shfl_up_sync(FULL_MASK, d.x, o, P);
                const u32 uy = __shfl_up_sync(FULL_MASK, d.y, o, P);
                const u32 same = (t >= o && ((ux ^ d.x) & BLOCK_SLOT) == 0 ? 0xffffu : 0u) |
                                 (t >= o && ((uy ^ d.y) & BLOCK_SLOT) == 0 ? 0xffff0000u : 0u);
                m = max_relu(m, v & same);
            }
            carry = __shfl_sync(FULL_MASK, m, P - 1, P);
            if (active) {
                // The thread holding a query's last block has its maximum: write its score.
                const u32 lanes[2] = {d.x, d.y};
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    if ((lanes[h] & BLOCK_END) && (lanes[h] & BLOCK_SLOT) != BLOCK_NONE) {
                        u32 s = ((m >> (16 * h)) & 0xffff) - bias;
                        if ((int)s > a.threshold) s = 0xffff;
                        a.scores[(size_t)(lanes[h] & BLOCK_SLOT) * a.ntargets + me] = (unsigned short)s;
                    }
                }
            }
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

#ifndef PAIRED
#define PAIRED 0
#endif

#if !PAIRED
extern "C" __global__ void __launch_bounds__(128, SEARCH_MIN_BLOCKS) sw_search(const SearchArgs a) {
    search<THREADS, ROWS>(a);
}
#else
// ---- Candidate pairs grouped by query (-DPAIRED=1) --------------------------------------
// Pairs by id with the search's structure: a block is one warp, and its item is one query
// with up to ITEM_GROUPS groups of its candidate targets. A group is the warp's targets: 32
// / P subwarps of P threads, two targets each, one per 16-bit lane. The query's rows are
// the strand, its profile built per pass in shared memory (16 bits a row) from the matrix,
// so both lanes read the same rows against different targets: per column two profile rows
// (one per lane's residue) whose halves are interleaved by byte permutes, one per cell pair
// on top of the search's 4.5 DPX operations. A group steps as long as its longest target
// (the host sorts a query's targets longest first); a warp waits for no other warp. The
// sets stay resident; only the plan (items, slots) and the results cross PCIe.
//
// End cell, as every engine: the highest score, then the smallest target end, then the
// smallest query end. A thread keeps per lane its best (strictly greater only, in column
// order) with the first row of the column reaching it; the column's maximum is taken per
// column, and only a column that beats the best (rare after the first columns) looks for
// the row. The subwarp reduces (score, column, row) as one 64-bit key per lane, and the
// passes of a long query combine their keys the same way.
//
// Padding cells (columns past a lane's target, lead-in and lead-out columns, rows past the
// query) descend from real cells through gap costs or score PAD (-1024), so each lies
// strictly below some real cell and never wins or ties the end cell. Overflow as in the
// search: a lane whose best could have wrapped is reported as score -1 and recomputed at
// 32 bits by the host.

struct PairedArgs {
    const u8* tres;          // target set: residue codes, each sequence 4-byte aligned and
                             // PAD-padded to a multiple of 4, 16 PAD bytes at the end
    const u32* tstarts;      // byte offset of each target-set sequence
    const u32* tlens;
    const u8* qres;          // query set, the same layout (the same buffers for one set)
    const u32* qstarts;
    const u32* qlens;
    const short* matrix;     // score(query code, target code), (alpha - 1)^2, row-major
    const uint4* items;      // query, first group, groups, 0; the items of most work first
    const u32* slot_target;  // per slot: target index; an item's slots longest first, in
                             // groups of 2 x 32 / P (a warp's targets)
    const u32* slot_out;     // per slot: result index, SLOT_NONE for a padding slot
    const u32* group_cols;   // per group: its columns' offset in the block's boundary rows
    unsigned long long* keys;  // per slot: the best of the passes so far (multi-pass items)
    int4* results;           // per result: score (-1: recompute at 32 bits), qend, tend, 0
    int* scratch;            // boundary rows: per block two buffers of maxcols int2
    u32* counter;            // work counter, zero before the launch
    u32 nitems;
    u32 maxcols;             // int2 entries per boundary buffer (an item's groups' padded
                             // longest targets + 4 each, at most)
    u32 alpha;               // profile rows: alphabet size + 1 (PAD)
    u32 oe;                  // open + extend in both halves: also the bias B
    u32 neg_ext;             // -extend in both halves
    int threshold;           // T (unbiased): a lane best above this may have overflowed
};

#define PAIRED_BLOCK 32  // one warp: its own item and profile, no waits on other warps
#define SLOT_NONE 0xffffffffu
#define PAD_SCORE (-1024)

// One column of a thread's K rows for two targets: `pa` and `pb` are the profile rows of
// lane A's and lane B's residue (16 bits a query row); `cm` gets the column's maximum.
template <int P, int K>
__device__ __forceinline__ void column2(const short* __restrict__ pa, const short* __restrict__ pb, u32 diag,
                                        u32& f, u32 (&H)[K], u32 (&E)[K], u32& cm, u32 oe, u32 neg_ext) {
#pragma unroll
    for (int i = 0; i < K / 8; ++i) {
        const int4 a4 = *(const int4*)(pa + i * P * 8);
        const int4 b4 = *(const int4*)(pb + i * P * 8);
        const u32 aw[4] = {(u32)a4.x, (u32)a4.y, (u32)a4.z, (u32)a4.w};
        const u32 bw[4] = {(u32)b4.x, (u32)b4.y, (u32)b4.z, (u32)b4.w};
#pragma unroll
        for (int w = 0; w < 4; ++w) {
            // Rows 2w and 2w + 1 of the chunk: (A, B) halves of each.
            const u32 sv[2] = {__byte_perm(aw[w], bw[w], 0x5410), __byte_perm(aw[w], bw[w], 0x7632)};
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int r = 8 * i + 2 * w + e;
                const u32 h = __vimax3_s16x2(__viaddmax_s16x2(diag, sv[e], E[r]), f, oe);
                diag = H[r];
                H[r] = h;
                const u32 hoe = h - oe;  // both halves >= 0: no borrow
                E[r] = __viaddmax_s16x2(E[r], neg_ext, hoe);
                f = __viaddmax_s16x2(f, neg_ext, hoe);
            }
        }
    }
    u32 m = H[0];
#pragma unroll
    for (int r = 1; r + 1 < K; r += 2) m = __vimax3_s16x2(m, H[r], H[r + 1]);
    if (K % 2 == 0) m = __vmaxs2(m, H[K - 1]);
    cm = m;
}

// The best of a thread's rows per lane, in column order: biased scores in both halves,
// each lane's column and row (within the thread) of the first cell reaching it.
struct Best {
    u32 score;
    int col[2];
    int row[2];
};

// After column `col`: a lane whose column maximum beats its best takes it, with the
// column's first row reaching it.
template <int K>
__device__ __forceinline__ void improve(Best& b, const u32 (&H)[K], u32 cm, int col) {
#ifdef PAIRED_SCORE_ONLY
    b.score = __vmaxs2(b.score, cm);
    return;
#endif
    // One DPX max says per half whether the best holds (ties keep it); the first row whose
    // H reaches the column maximum is then the first with H >= cm.
    bool keep_hi, keep_lo;
    b.score = __vibmax_s16x2(b.score, cm, &keep_hi, &keep_lo);
    if (!(keep_hi && keep_lo)) {
        int rlo = 0, rhi = 0;
#pragma unroll
        for (int r = K - 1; r >= 0; --r) {
            bool hi, lo;
            (void)__vibmax_s16x2(H[r], cm, &hi, &lo);
            rlo = lo ? r : rlo;
            rhi = hi ? r : rhi;
        }
        if (!keep_lo) {
            b.col[0] = col;
            b.row[0] = rlo;
        }
        if (!keep_hi) {
            b.col[1] = col;
            b.row[1] = rhi;
        }
    }
}

// The paired kernel's lanes: two targets (A in the low half, B in the high half) against
// one query; `best` takes each lane's end cell.
template <int P, int K>
struct TargetLanes {
    const u8* tres;
    const short* prow;  // the thread's first profile entry
    u32 startA, lpadA, startB, lpadB, pad4, oe, neg_ext;
    Best best;
    u32 resA, resB, resA_next, resB_next;
    __device__ __forceinline__ u32 pad_codes() const { return pad4; }
    __device__ __forceinline__ void fetch(u32 nc) {
        resA_next = nc < lpadA ? *(const u32*)(tres + startA + nc) : pad4;
        resB_next = nc < lpadB ? *(const u32*)(tres + startB + nc) : pad4;
    }
    __device__ __forceinline__ void advance() {
        resA = resA_next;
        resB = resB_next;
    }
    // The codes of the step's two columns: lane A's in the low bytes, lane B's in the high.
    __device__ __forceinline__ u32 codes(int u) const {
        return ((resA >> (16 * u)) & 0xffffu) | ((resB >> (16 * u)) << 16);
    }
    __device__ __forceinline__ u32 h_in(u32 h) const { return h; }
    __device__ __forceinline__ u32 f_in(u32 f) const { return f; }
    __device__ __forceinline__ void column(u32 cc, int c, u32 diag, u32& f, u32 (&H)[K], u32 (&E)[K], int col) {
        u32 cm;
        column2<P, K>(prow + ((cc >> (8 * c)) & 0xff) * (P * K), prow + ((cc >> (16 + 8 * c)) & 0xff) * (P * K), diag,
                      f, H, E, cm, oe, neg_ext);
        improve<K>(best, H, cm, col);
    }
};

// A lane's best as one key: biased score, then the smaller column, then the smaller row.
__device__ __forceinline__ unsigned long long end_key(u32 score, int col, int row) {
    return ((unsigned long long)score << 48) | ((unsigned long long)(0xffffffu - (u32)col) << 24) |
           (unsigned long long)(0xffffffu - (u32)row);
}

template <int P, int K>
__device__ void paired(const PairedArgs& a) {
    constexpr int R = P * K;
    constexpr int WARPS = PAIRED_BLOCK / 32;
    constexpr int SW = 32 / P;  // subwarps per warp: a group is 2 SW slots
    extern __shared__ int4 smem4[];
    short* prof = (short*)smem4;
    __shared__ short s_matrix[32 * 32];
    __shared__ u32 s_item;

    const int warp = threadIdx.x / 32, sw = (threadIdx.x % 32) / P, t = threadIdx.x % P;
    const u32 pad = a.alpha - 1;
    const u32 pad4 = pad * 0x01010101u;
    const u32 bias = a.oe & 0xffff;
    const u32 n = a.alpha - 1;  // matrix side (at most 31: PAD is a code too)
    int2* scratch = (int2*)a.scratch + (size_t)blockIdx.x * 2 * a.maxcols;
    for (u32 i = threadIdx.x; i < n * n; i += PAIRED_BLOCK) s_matrix[i] = a.matrix[i];

    for (;;) {
        __syncthreads();
        if (threadIdx.x == 0) s_item = atomicAdd(a.counter, 1u);
        __syncthreads();
        const u32 item = s_item;
        if (item >= a.nitems) break;
        const uint4 it = a.items[item];
        const u32 q = it.x, group0 = it.y, ngroups = it.z;
        const u32 qlen = a.qlens[q];
        const u8* qseq = a.qres + a.qstarts[q];
        const u32 passes = (qlen + R - 1) / R;
        for (u32 pass = 0; pass < passes; ++pass) {
            __syncthreads();
            // The pass's profile: prof[c * R + (chunk * P + thread) * 8 + e] for row
            // thread * K + chunk * 8 + e, so a thread reads its K rows as K/8 16-byte words.
            // Each thread takes whole rows: one residue read, every code's score from the
            // matrix in shared memory.
            for (u32 r = threadIdx.x; r < R; r += PAIRED_BLOCK) {
                const u32 row = pass * R + r;
                const short* mrow = row < qlen ? s_matrix + qseq[row] * n : 0;
                const u32 at = ((r % K) / 8 * P + r / K) * 8 + r % 8;
                for (u32 c = 0; c < a.alpha; ++c) prof[c * R + at] = (short)(mrow && c < pad ? mrow[c] : PAD_SCORE);
            }
            __syncthreads();
            const bool first = pass == 0, last = pass + 1 == passes;
            // Each warp takes every WARPS-th group of the item: SW subwarps, two slots each,
            // stepping as long as the group's longest target (its first slot).
            for (u32 g = warp; g < ngroups; g += WARPS) {
                const u32 G = group0 + g;
                const u32 sa = G * 2 * SW + 2 * sw, sb = sa + 1;
                const u32 oa = a.slot_out[sa], ob = a.slot_out[sb];
                const u32 ta = a.slot_target[sa], tb = a.slot_target[sb];
                const u32 lenA = oa != SLOT_NONE ? a.tlens[ta] : 0, lenB = ob != SLOT_NONE ? a.tlens[tb] : 0;
                const u32 lpadA = (lenA + 3) & ~3u, lpadB = (lenB + 3) & ~3u;
                const u32 startA = oa != SLOT_NONE ? a.tstarts[ta] : 0, startB = ob != SLOT_NONE ? a.tstarts[tb] : 0;
                const u32 longest = (a.tlens[a.slot_target[G * 2 * SW]] + 3) & ~3u;
                const u32 steps = longest / COLS + P;
                // Boundary rows: the subwarp's columns at its group's offset in the block's
                // two buffers (each subwarp of a group has longest + 4 columns).
                const u32 col0 = a.group_cols[G] + sw * (longest + 4);
                const int2* bin = scratch + ((pass & 1) ? a.maxcols : 0) + col0;
                int2* bout = scratch + ((pass & 1) ? 0 : a.maxcols) + col0;
                TargetLanes<P, K> ln{a.tres, prof + t * 8, startA, lpadA, startB, lpadB, pad4, a.oe, a.neg_ext,
                                     {a.oe, {0, 0}, {0, 0}}};
                run_pass<P, K>(ln, a.oe, max(lpadA, lpadB), steps, first, last, bin, bout);
                const Best& best = ln.best;
                const int row0 = (int)(pass * R) + t * K;
                unsigned long long kA = end_key(best.score & 0xffff, best.col[0], row0 + best.row[0]);
                unsigned long long kB = end_key(best.score >> 16, best.col[1], row0 + best.row[1]);
#pragma unroll
                for (int o = 1; o < P; o *= 2) {
                    const unsigned long long xA = __shfl_xor_sync(FULL_MASK, kA, o, P);
                    const unsigned long long xB = __shfl_xor_sync(FULL_MASK, kB, o, P);
                    kA = xA > kA ? xA : kA;
                    kB = xB > kB ? xB : kB;
                }
                if (t == 0) {
                    const unsigned long long keys[2] = {kA, kB};
                    const u32 slots[2] = {sa, sb}, outs[2] = {oa, ob};
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        if (outs[h] == SLOT_NONE) continue;
                        unsigned long long k = keys[h];
                        // The passes before left their best in `keys`.
                        if (!first) k = a.keys[slots[h]] > k ? a.keys[slots[h]] : k;
                        if (!last) {
                            a.keys[slots[h]] = k;
                            continue;
                        }
                        const int score = (int)(u32)(k >> 48) - (int)bias;
                        const int col = (int)(0xffffffu - (u32)((k >> 24) & 0xffffffu));
                        const int row = (int)(0xffffffu - (u32)(k & 0xffffffu));
                        int4 r = make_int4(score, row + 1, col + 1, 0);
                        if (score > a.threshold) r = make_int4(-1, 0, 0, 0);
                        else if (score <= 0) r = make_int4(0, 0, 0, 0);
                        a.results[outs[h]] = r;
                    }
                }
            }
        }
    }
}

// Warps per SM the register allocation must allow: 12 at 32 rows (168 registers), 16 below.
#ifndef PAIRED_MIN_BLOCKS
#define PAIRED_MIN_BLOCKS (ROWS >= 32 ? 12 : 16)
#endif

extern "C" __global__ void __launch_bounds__(PAIRED_BLOCK, PAIRED_MIN_BLOCKS) sw_search(const PairedArgs a) {
    paired<THREADS, ROWS>(a);
}
#endif  // PAIRED

// ---- Top-k on the GPU -----------------------------------------------------------------
// Scores of query slot q are bucketed by min(score, BINS - 1); the
// threshold is the highest bucket whose suffix count reaches k, and only hits at or above
// it are compacted and copied back. The host ranks those exactly.

#define BINS 4096

__device__ __forceinline__ u32 lane_score(const unsigned short* scores, u32 ntargets, u32 q, u32 i) {
    return scores[(size_t)q * ntargets + i];
}

// grid (blocks, queries); hist is [queries][BINS], zeroed before.
extern "C" __global__ void topk_hist(const unsigned short* scores, u32 ntargets, u32* hist) {
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
extern "C" __global__ void topk_select(const unsigned short* scores, u32 ntargets, const u32* threshold, u32 cap,
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

// One-to-one Smith-Waterman (affine gaps) for batches of (query, target) pairs: score, end
// cell and, in reverse mode, start cell. Compiled by NVRTC once per variant:
//   -DROWS=R    query rows each thread keeps in registers (4, 8, 12, 16; 32 unpacked)
//   -DPACKED=1  two pairs per thread in s16x2 lanes (DPX), 0: one pair per thread at 32 bits
//   -DMODE=1    global and semi-global alignment (src/engine/mode.rs): score and end cell,
//               and in reverse mode the start's cell (see "Modes" below); 0: local
//   -DPIPELINE=1 groups of a whole warp over several passes, each pass an item that any warp
//               takes by ticket once the pass before is under way: pass p reads pass p - 1's
//               bottom row column by column as it is written (a progress word per pass), so
//               a long pair runs on as many warps as it has passes, not on one (a 20,000 x
//               20,000 DNA pair: 40 passes in sequence on one warp before)
//
// Layout of the work: a group of G threads (a power of two up to 32, chosen per warp from
// the `warps` table, so one launch runs the bins of every G) aligns one pair per lane
// half. Thread t of a group owns query rows [pass*G*R + t*R, +R) and walks the target
// COLS = 2 columns per step; at step s thread t works on columns 2(s - t) and 2(s - t) + 1
// (a wavefront), getting the H and F values of the row above from thread t-1 by shuffle.
// Queries longer than G*R rows take several passes; the last row of a pass goes through
// `scratch` to the next.
//
// The step has no bounds tests (the search kernel's steady state): before its first column
// a thread receives padding codes and the zero state, after the last one padding codes, so
// its cells there stay at zero or below a real cell (padding scores -128) and never make or
// tie a best. Two columns per step give the scheduler two independent dependency chains
// (column j+1 of row r beside column j of row r+2) and halve the per-step costs (shuffles,
// target fetch, loop); the H of both columns stay in registers (HA, HB) for the tie rule.
//
// Scores come from a small per-thread profile in shared memory: for each residue code c,
// the R scores s(q_i, c) of the thread's rows as bytes, read in chunks of 16, 8 or 4 rows
// (one 16-, 8- or 4-byte load each). It is built once per pass from the matrix rows of
// four query residues at a time, four codes per aligned word, transposed by byte
// permutes: ~7 instructions per profile word against ~18 with a byte lookup each (a short
// reverse pass spent a tenth of its time building profiles). 12 rows
// (three 4-byte chunks) cut the padding of power-of-two spans and, with 600 profile bytes per
// thread for proteins against 800 at 16 rows, fit 11 warps per SM instead of 8.
//
// Biased values (as kernels/sw_search.cu): H, E and F are stored plus B = open + extend
// and H is clamped at B (the local zero), gap of length k costs open + k*ext:
//   E(i,j) = max(E(i,j-1) - ext, H(i,j-1) - B)
//   F(i,j) = max(F(i-1,j) - ext, H(i-1,j) - B)
//   H(i,j) = max(H(i-1,j-1) + s, E(i,j), F(i,j), B)
// H - B >= 0 in both halves, so it is a plain 32-bit subtraction (no borrow): 4 DPX
// operations per cell pair plus 0.5 for the column maximum. Stored values lie in
// [-127, best + B + max score], so 16-bit lanes cannot wrap while the biased best stays
// under `overflow_limit` (= 32767 - max score - 1); above it the pair is flagged and the
// host recomputes it with the 32-bit variant.
//
// Tie rule: each thread keeps its best (strictly greater only) in column order, with the
// first row of its column reaching it; the group reduces (score max, column min, row min).
// Reverse mode aligns the reversed prefixes q[0..qlen) t[0..tlen) (qlen = qend,
// tlen = tend): its first cell, in the same order, reaching the forward score is the start
// (see align.rs for why plain local alignment gives the anchored answer), and a group stops
// as soon as that cell is settled. No cell there scores above the forward score, so the
// reverse pass looks for the goal only (its best starts one below it), not for a running
// best that rises along the whole path.

// Modes (-DMODE=1). The same wavefront without the local zero: H = max(diag + s, E, F),
// values stored unbiased, H - B taken per half by one DPX add (the halves may be
// negative, so a plain 32-bit subtraction would borrow across them). Borders come from
// `mode_flags` (bit 0 query start free, 1 query end free, 2 target start free, 3 target
// end free): H(i, 0) = 0 or -(open + i * ext), H(0, j) = 0 or -(open + j * ext).
//  - The top border enters thread 0 of the first pass as its row above. Each query gets
//    `tpad` < R rows on top (rows of the zero-score code with a free target start, of
//    the padding code otherwise) that copy that border down exactly: with a left border
//    of 0 they reproduce H(0, j) in every padded row (the host keeps open + ext <= 127,
//    so the padding code's -128 never wins). The pad puts the query's last row on
//    register row R - 1 of a thread, so the last row, whose cells may end a semi-global
//    alignment, is read at a compile-time register index.
//  - Columns before a thread's first (the wavefront's lead-in) are recomputed garbage;
//    after such a step the thread's state is reset to the left border (H(i, 0), and
//    E(i, 1) = H(i, 0) - B: gaps open from it).
//  - End cell: the last column's cells (all rows with a free query end, else the last
//    row's) when the column passes, and with a free target end the last row's cells
//    before it, tracked by one DPX max per column in the thread holding that row; the
//    group reduces (score, column, row) lexicographically, as in local mode.
//  - Range: a pair whose cells could leave 16 bits (every cell lies within
//    -(3 open + (m + n + 2) ext) and min(m, n) * max score) is flagged for the 32-bit
//    variant before it starts (`range_lo`, `max_score`); cells past a sequence's end may
//    wrap, but no real cell reads them.
//  - Reverse mode (the start, src/engine/mode.rs "Start cell"): the reversed prefixes up
//    to the forward end cell, read backwards as in local mode, in the mode the host gives
//    (`mode_flags` of the reverse pass: the forward's free starts as free ends, no free
//    start); its end cell, in reversed coordinates, is the start's (the host adds the two
//    border cells and picks by the end rule). No cell scores above the forward score (the
//    goal): with a free last row, the first of its cells reaching the goal wins every tie
//    that a later column could make, so the group stops once the row's owner has found it.

typedef unsigned int u32;
typedef unsigned char u8;

#ifndef ROWS
#define ROWS 16
#endif
#ifndef PACKED
#define PACKED 1
#endif
#define COLS 2

#define FULL 0xffffffffu
#define NONE 0x7fffffff
// A mode's end candidate not yet found (every real score is above it).
#define SCORE_NONE (-2147483647 - 1)
#ifndef PIPELINE
#define PIPELINE 0
#endif
#ifndef MODE
#define MODE 0
#endif
#define QS_FREE 1
#define QE_FREE 2
#define TS_FREE 4
#define TE_FREE 8
// Pipelined progress words: columns written, this bit once the pass is over.
#define FINAL_BIT 0x80000000u

#if PACKED
#define HALVES 2
typedef u32 V;
__device__ __forceinline__ V splat(int x) { u32 h = (u32)x & 0xffffu; return h | (h << 16); }
// max(a + b, c) per half
__device__ __forceinline__ V addmax(V a, V b, V c) { return __viaddmax_s16x2(a, b, c); }
__device__ __forceinline__ V max3(V a, V b, V c) { return __vimax3_s16x2(a, b, c); }
__device__ __forceinline__ V max2(V a, V b) { return __vmaxs2(a, b); }
__device__ __forceinline__ int lane_of(V v, int h) { return h ? (int)(short)(v >> 16) : (int)(short)(v & 0xffffu); }
__device__ __forceinline__ V lanes(int lo, int hi) { return ((u32)lo & 0xffffu) | ((u32)hi << 16); }
__device__ __forceinline__ V with_lane(V v, int h, int x) {
    return h ? (v & 0xffffu) | ((u32)x << 16) : (v & 0xffff0000u) | ((u32)x & 0xffffu);
}
// Below every real value of a mode's pair in range, and safe to subtract one extension from.
#define MODE_NEG (-32000)
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
__device__ __forceinline__ V max3(V a, V b, V c) { return __vimax3_s32(a, b, c); }
__device__ __forceinline__ V max2(V a, V b) { return max(a, b); }
__device__ __forceinline__ int lane_of(V v, int) { return v; }
__device__ __forceinline__ V lanes(int lo, int) { return lo; }
__device__ __forceinline__ V with_lane(V, int, int x) { return x; }
#define MODE_NEG (-(1 << 29))
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
// Profile chunk: the bytes of one shared-memory load.
#define CHUNK (R % 16 == 0 ? 16 : R % 8 == 0 ? 8 : 4)
#define NCHUNK (R / CHUNK)

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

// The R profile bytes of code `c`: WORDS words from `base` (this thread's chunk 0 of code
// 0 of the half), codes `cstride` bytes apart, chunks `kstride` bytes apart.
__device__ __forceinline__ void load_scores(const u8* base, u32 c, u32 cstride, u32 kstride, u32 (&w)[WORDS]) {
    const u8* p0 = base + c * cstride;
#pragma unroll
    for (int k = 0; k < NCHUNK; ++k) {
        const u8* p = p0 + k * kstride;
        if constexpr (CHUNK == 16) {
            const uint4 x = *(const uint4*)p;
            w[4 * k] = x.x; w[4 * k + 1] = x.y; w[4 * k + 2] = x.z; w[4 * k + 3] = x.w;
        } else if constexpr (CHUNK == 8) {
            const uint2 x = *(const uint2*)p;
            w[2 * k] = x.x; w[2 * k + 1] = x.y;
        } else {
            w[k] = *(const u32*)p;
        }
    }
}

// One column of the thread's R rows: H into `hout` from the previous column's `hin`,
// E updated in place; `diag` = H(row0 - 1, j - 1), `f` = F(row0, j) on entry and
// F(row0 + R, j) on return. Returns the column maximum.
__device__ __forceinline__ V column(const u32 (&wa)[WORDS], const u32 (&wb)[WORDS], V diag, V& f,
                                    const V (&hin)[R], V (&hout)[R], V (&e)[R], V bias, V mext) {
    Unroll<R>::run([&](auto k) {
        constexpr int r = decltype(k)::value;
        const V sc = score_of<r % 4>(wa[r / 4], wb[r / 4]);
#if MODE
        // `bias` is -B here: H - B per half, the floor never binds on real cells.
        const V h = max2(addmax(diag, sc, e[r]), f);
        diag = hin[r];
        hout[r] = h;
        const V hb = addmax(h, bias, splat(MODE_NEG));
#else
        const V h = max3(addmax(diag, sc, e[r]), f, bias);
        diag = hin[r];
        hout[r] = h;
        const V hb = h - bias;  // both halves >= 0: no borrow
#endif
        e[r] = addmax(e[r], mext, hb);
        f = addmax(f, mext, hb);
    });
    V m = hout[0];
    Unroll<(R - 1) / 2>::run([&](auto k) {
        constexpr int r = 1 + 2 * decltype(k)::value;
        m = max3(m, hout[r], hout[r + 1]);
    });
    if ((R - 1) % 2) m = max2(m, hout[R - 1]);
    return m;
}

// Strict improvement of the thread's best by column j's maximum `cm` over rows `hc`:
// per half, the new best, its column and the first row reaching it.
__device__ __forceinline__ void improve(V cm, const V (&hc)[R], int j, V& best, int (&bcol)[HALVES],
                                        int (&brow)[HALVES]) {
#if PACKED
    // One DPX max with per-half predicates (VIMNMX.S16x2 with predicate outputs) gives
    // both the new best and which halves keep theirs (best >= cm: strict improvement only);
    // the first row equal to the column maximum is then the first whose H >= cm, one such
    // max and two selects per row (the emulated __vcmpeq2 took five instructions a row).
    bool keep_hi, keep_lo;
    best = __vibmax_s16x2(best, cm, &keep_hi, &keep_lo);
    if (!(keep_hi && keep_lo)) {
        int rlo = 0, rhi = 0;
#pragma unroll
        for (int r = R - 1; r >= 0; --r) {
            bool hi, lo;
            (void)__vibmax_s16x2(hc[r], cm, &hi, &lo);
            rlo = lo ? r : rlo;
            rhi = hi ? r : rhi;
        }
        if (!keep_lo) {
            bcol[0] = j;
            brow[0] = rlo;
        }
        if (!keep_hi) {
            bcol[1] = j;
            brow[1] = rhi;
        }
    }
#else
    if (cm > best) {
        int row = 0;
#pragma unroll
        for (int r = R - 1; r >= 0; --r)
            if (hc[r] == cm) row = r;
        bcol[0] = j;
        brow[0] = row;
    }
    best = max2(best, cm);
#endif
}

// Kernel arguments (one struct, passed by value).
struct AlignArgs {
    const uint4* pairs;   // per pair: (query offset in seqs, target offset, qlen, tlen)
    const int* groups;    // groups[g * HALVES + h] = pair index, or -1 for an empty slot
    const int4* warps;    // per warp: (G, first group, scratch slot, groups in the warp)
    int nwarps;
    const u8* seqs;
    const signed char* matrix;  // nc1 x nc1, code nc1 - 1 pads (scores -128)
    int nc1;
    int gap_oe, gap_ext;
    const int4* fwd;      // reverse mode: the forward pass's out
    int overflow_limit;   // biased best above this: flagged for 32-bit recomputation
    int4* out;            // per pair: (score, row, column, flags)
    u32* scratch;         // per column j, per slot s: H at [2j * slots + s], F at [(2j + 1) * slots + s]
    int scratch_stride;   // columns (scratch holds 2 * stride * slots words)
    int scratch_slots;
    int mode_flags;       // MODE: QS_FREE | QE_FREE | TS_FREE | TE_FREE
    int range_lo;         // MODE: 3 open + (m + n + 2) ext above this: flagged (32 bits)
    int max_score;        // MODE: min(m, n) * max_score above range_lo: flagged too
};

// out[p] = (score, row, column, flags) with 0-based row/column of the cell found (forward:
// end; reverse: in reversed coordinates); flags bit 0 = 16-bit overflow (recompute).
// Reverse mode reads the forward pass's out as `fwd` (same bins, launched after it on the
// same stream, so no host round trip): the prefixes end at its cell and its score is the
// goal; pairs with score 0 or the overflow flag are skipped (written as score 0).
// The warp table's lanes form 32 / G groups of G threads; groups past the count are idle.
template <bool REVERSE>
__device__ __forceinline__ void align_body(const AlignArgs& a) {
    extern __shared__ __align__(16) u8 smem[];
    const int nc1 = a.nc1;
    // The matrix rows are padded to a multiple of 4 bytes, so a row's scores against four
    // codes are one aligned word (the profile is built from such words, transposed).
    const int mstride = (nc1 + 3) & ~3;
    // Modes: one more row, all zeros, the code of the top padding rows under a free top.
    const int mrows = MODE ? nc1 + 1 : nc1;
    const int msize = (mrows * mstride + 15) & ~15;
    signed char* mat = (signed char*)smem;
    for (int i = threadIdx.x; i < mrows * mstride; i += blockDim.x) {
        const int row = i / mstride, col = i - row * mstride;
        mat[i] = col < nc1 && row < nc1 ? a.matrix[row * nc1 + col] : (signed char)0;
    }
    __syncthreads();

#if PIPELINE
    // Entries are (32, group, passes, 1), most passes first, followed in the table by
    // pass_start[0..levels] (items before pass p: an item is one pass of one entry, so the
    // entries with more than p passes are the first pass_start[p + 1] - pass_start[p]).
    // State past the scratch rows (zeroed by the host before each launch): each item's
    // best per half, each (entry, pass)'s columns written, each entry's items finished, and
    // the ticket counter.
    const int entries = a.nwarps;
    const int levels = entries > 0 ? a.warps[0].z : 0;
    const int* pass_start = (const int*)(a.warps + entries);
    const int items = pass_start[levels];
    u32* state = a.scratch + 2 * (size_t)a.scratch_stride * a.scratch_slots;
    int4* recs = (int4*)state;
    u32* progress = state + (size_t)entries * levels * HALVES * 4;
    u32* finished = progress + (size_t)entries * levels;
    u32* tickets = finished + entries;
    for (;;) {
    // Items in ticket order: an item's predecessor (the same entry's pass before) has a
    // smaller ticket, so it is held by a running warp and every wait ends.
    int ticket = 0;
    if ((threadIdx.x & 31) == 0) ticket = (int)atomicAdd(tickets, 1u);
    ticket = __shfl_sync(FULL, ticket, 0);
    if (ticket >= items) break;
    int item_pass = 0;
    while (pass_start[item_pass + 1] <= ticket) ++item_pass;
    const int entry = ticket - pass_start[item_pass];
    const int4 task = a.warps[entry];
#else
    const int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int4 task = w < a.nwarps ? a.warps[w] : make_int4(32, 0, 0, 0);
#endif
    const int G = task.x;  // uniform across the warp: shuffle widths and reductions use it
    const int t = (threadIdx.x & 31) % G;
    const int k = (threadIdx.x & 31) / G;
    const bool real_group = k < task.w;
    const int gid = task.y + k;
    u32 pad = (u32)(nc1 - 1);
    asm("" : "+r"(pad));  // kept in a register (recomputed in every step otherwise)

    // Per half: sequences (in reverse mode, pointers to the last residue, read backwards)
    // and lengths (empty slots and missing groups: length 0).
    const u8* qs[HALVES];
    const u8* ts[HALVES];
    int qlen[HALVES], tlen[HALVES], pidx[HALVES], goal[HALVES];
    // Modes' reverse mode: whether the half has a goal (any score can be one).
    bool sought[HALVES];
    int rows = 0, cols = 0;
#if MODE
    const int flags = a.mode_flags;
    const int gap_open = a.gap_oe - a.gap_ext, gap_ext = a.gap_ext;
    int tpad[HALVES];
    u32 range_flag = 0;
#endif
#pragma unroll
    for (int h = 0; h < HALVES; ++h) {
        int p = real_group ? a.groups[gid * HALVES + h] : -1;
        pidx[h] = p;
        qs[h] = ts[h] = a.seqs;
        qlen[h] = tlen[h] = 0;
        goal[h] = 0;
        sought[h] = false;
        if (p >= 0) {
            const uint4 d = a.pairs[p];
            qlen[h] = d.z;
            tlen[h] = d.w;
            goal[h] = NONE;
            if (REVERSE) {
                // Local: score 0 has no start; modes: every end cell found has one.
                const int4 f = a.fwd[p];
                const bool found = (MODE ? f.y >= 0 && f.z >= 0 : f.x > 0) && !(f.w & 1);
                qlen[h] = found ? f.y + 1 : 0;
                tlen[h] = found ? f.z + 1 : 0;
                goal[h] = found && !MODE ? f.x : 0;
                if (MODE) {
                    goal[h] = f.x;
                    sought[h] = found;
                }
            }
            qs[h] = a.seqs + d.x + (REVERSE ? qlen[h] - 1 : 0);
            ts[h] = a.seqs + d.y + (REVERSE ? tlen[h] - 1 : 0);
#if MODE
            const long long lo = 3LL * gap_open + (long long)(qlen[h] + tlen[h] + 2) * gap_ext;
            const long long hi = (long long)min(qlen[h], tlen[h]) * a.max_score;
            if (lo > a.range_lo || hi > a.range_lo) {
                range_flag |= 1u << h;
                qlen[h] = tlen[h] = 0;
            }
#endif
        }
#if MODE
        tpad[h] = (R - qlen[h] % R) % R;
        sought[h] = sought[h] && qlen[h] > 0;
        rows = max(rows, qlen[h] + tpad[h]);
#else
        rows = max(rows, qlen[h]);
#endif
        cols = max(cols, tlen[h]);
    }
    constexpr int DIR = REVERSE ? -1 : 1;
    const int span = G * R;
    int passes = (rows + span - 1) / span;
    passes = __reduce_max_sync(FULL, passes);
    // Column-major over slots: the groups of a warp have consecutive slots, so their
    // accesses to one column coalesce.
    const size_t ns = (size_t)a.scratch_slots;
#if PIPELINE
    // Two slots per entry, a ring: pass p writes slot p & 1 and reads slot (p - 1) & 1,
    // which pass p - 2 wrote before; pass p + 1 has read a column of it before pass p + 2
    // overwrites that column (it waits for pass p + 1's column, which read it one step ahead).
    u32* const scr = a.scratch + 2 * entry;
    const int pass_lo = item_pass, pass_hi = min(item_pass + 1, passes);
#else
    u32* const scr = a.scratch + (real_group ? task.z + k : 0);
    const int pass_lo = 0, pass_hi = passes;
#endif

    const int bias_i = a.gap_oe;
    const V mext = splat(-a.gap_ext), bias = splat(MODE ? -bias_i : bias_i);
#if MODE
    const V neg = splat(MODE_NEG);
    // H(i', 0) of register row i' (the query's row i' - tpad, top padding rows 0).
    auto left = [&](int ip) -> V {
        int v[HALVES];
#pragma unroll
        for (int h = 0; h < HALVES; ++h)
            v[h] = ip < tpad[h] || (flags & QS_FREE) ? 0 : -(gap_open + (ip - tpad[h] + 1) * gap_ext);
        return lanes(v[0], v[HALVES - 1]);
    };
    // The row above's top border H(0, j) for column j.
    auto top = [&](int j) -> V {
        const int v = flags & TS_FREE ? 0 : -(gap_open + (j + 1) * gap_ext);
        return splat(v);
    };
    // A gap opened from H: E and F.
    auto open_e = [&](V h) -> V { return addmax(h, bias, neg); };
    auto open_f = [&](V h) -> V { return addmax(h, bias, neg); };
#endif
    // Profile addressing: this thread's chunk 0 of code 0 of half 0; half 1 follows.
    // The offsets are made opaque to the compiler, which otherwise recomputed them (and
    // the shared-memory window, the matrix size) in every step: ~12 instructions a step.
    u32 kstride = blockDim.x * CHUNK, a_off = msize + threadIdx.x * CHUNK, b_off = nc1 * NCHUNK * kstride;
    asm("" : "+r"(kstride), "+r"(a_off), "+r"(b_off));
    const u32 cstride = NCHUNK * kstride;
    const u8* prof_a = smem + a_off;
    const u8* prof_b = prof_a + b_off;
    Best run[HALVES];
#pragma unroll
    for (int h = 0; h < HALVES; ++h) run[h] = Best{MODE ? SCORE_NONE : 0, NONE, NONE};
#if MODE
    u32 overflow = range_flag;
#else
    u32 overflow = 0;
#endif

    for (int pass = pass_lo; pass < pass_hi; ++pass) {
        const int row0 = pass * span + t * R;
        // This pass's boundary row from the pass before (H, then F `ns` words on), and its
        // own bottom row for the next pass.
#if PIPELINE
        u32* const rd = scr + ((pass - 1) & 1);
        u32* const wr = scr + (pass & 1);
        u32* const rd_progress = progress + (size_t)entry * levels + (pass - 1);
        u32* const wr_progress = progress + (size_t)entry * levels + pass;
        // Columns of the row before known written (reader), and known usable: a pass that
        // stopped early (reverse mode) leaves fewer, the rest read the zero state.
        int known = 0, usable = NONE;
        int written = 0;
#else
        u32* const rd = scr;
        u32* const wr = scr;
#endif
        // Columns this pass needs: all, or in local reverse mode those before a settled start.
        int pcols = cols;
        if (REVERSE && !MODE) {
            int lim = 0;
#pragma unroll
            for (int h = 0; h < HALVES; ++h) {
                int l = run[h].score >= goal[h] ? run[h].col : tlen[h];
                lim = max(lim, min(l, tlen[h]));
            }
            pcols = lim;
        }

        // Profile: chunk kk of code c, half h at prof_a + h * nc1 * cstride + c * cstride +
        // kk * kstride: s(q[row0 + r], c) for the chunk's rows.
        __syncwarp();
        // Four rows at a time: their matrix rows' words for codes c0..c0+3, transposed
        // (8 PRMT) into four profile words (code c0+k: the four rows' scores).
#pragma unroll
        for (int h = 0; h < HALVES; ++h) {
            u8* base = (u8*)(h ? prof_b : prof_a);
#pragma unroll
            for (int w = 0; w < WORDS; ++w) {
                const u8* m4[4];
#pragma unroll
                for (int b = 0; b < 4; ++b) {
                    const int i = row0 + 4 * w + b;
#if MODE
                    const int iq = i - tpad[h];
                    const u32 top = flags & TS_FREE ? (u32)nc1 : pad;
                    const u32 code = iq < 0 ? top : iq < qlen[h] ? qs[h][DIR * iq] : pad;
#else
                    const u32 code = i < qlen[h] ? qs[h][DIR * i] : pad;
#endif
                    m4[b] = (const u8*)mat + code * mstride;
                }
                u8* dst = base + ((4 * w) / CHUNK) * kstride + (4 * w) % CHUNK;
                for (int c0 = 0; c0 < nc1; c0 += 4) {
                    const u32 x0 = *(const u32*)(m4[0] + c0), x1 = *(const u32*)(m4[1] + c0);
                    const u32 x2 = *(const u32*)(m4[2] + c0), x3 = *(const u32*)(m4[3] + c0);
                    const u32 t0 = __byte_perm(x0, x1, 0x5140), t1 = __byte_perm(x0, x1, 0x7362);
                    const u32 t2 = __byte_perm(x2, x3, 0x5140), t3 = __byte_perm(x2, x3, 0x7362);
                    u8* d = dst + c0 * cstride;
                    *(u32*)d = __byte_perm(t0, t2, 0x5410);
                    if (c0 + 1 < nc1) *(u32*)(d + cstride) = __byte_perm(t0, t2, 0x7632);
                    if (c0 + 2 < nc1) *(u32*)(d + 2 * cstride) = __byte_perm(t1, t3, 0x5410);
                    if (c0 + 3 < nc1) *(u32*)(d + 3 * cstride) = __byte_perm(t1, t3, 0x7632);
                }
            }
        }
        __syncwarp();

        V E[R];
        // H of the step's last column, carried into the next step's first.
        V Hlast[R];
#pragma unroll
        for (int r = 0; r < R; ++r) {
#if MODE
            // E(i, 1) = H(i, 0) - B: a gap may open from the left border.
            Hlast[r] = left(row0 + r);
            E[r] = open_e(Hlast[r]);
#else
            Hlast[r] = bias;
            E[r] = 0;
#endif
        }
        // Forward: the running best from the zero state. Reverse: no cell of the
        // rectangle scores above the goal, so only the first cell reaching it matters;
        // starting each half's best one below its goal leaves the slow path (the row
        // search of `improve`) to the columns that reach the goal, instead of to every
        // column that raises a running best along the path (most of a reverse pass's
        // steps on homologous pairs). Halves without a goal never improve.
        V best = bias;
        if (!REVERSE) {
            // A later pass looks only for cells reaching the running best (ties may win on
            // an earlier column; the merge below applies the tie rule): restarting from
            // zero, every pass ran the slow path along its rising scores, in every step
            // where any of a warp's pairs rose (groups of one thread: 64 pairs a warp).
#if PACKED
            const u32 lo = run[0].score > 0 ? (u32)(run[0].score + bias_i - 1) : (u32)bias_i;
            const u32 hi = run[HALVES - 1].score > 0 ? (u32)(run[HALVES - 1].score + bias_i - 1) : (u32)bias_i;
            best = (lo & 0xffffu) | (hi << 16);
#else
            best = run[0].score > 0 ? run[0].score + bias_i - 1 : bias_i;
#endif
        } else {
#if PACKED
            const u32 lo = goal[0] > 0 ? (u32)(goal[0] + bias_i - 1) : 0x7fffu;
            const u32 hi = goal[HALVES - 1] > 0 ? (u32)(goal[HALVES - 1] + bias_i - 1) : 0x7fffu;
            best = (lo & 0xffffu) | (hi << 16);
#else
            best = goal[0] > 0 ? goal[0] + bias_i - 1 : NONE;
#endif
        }
        int bcol[HALVES], brow[HALVES];
#pragma unroll
        for (int h = 0; h < HALVES; ++h) bcol[h] = brow[h] = NONE;

#if MODE
        V hdiag = left(row0 - 1);  // H(row0 - 1, j - 1): the left border before column 0
        // End-cell candidates: the last row, held at register row R - 1 by thread `own`
        // of its pass, and the last column (see the header).
        bool own[HALVES];
        int tlim = NONE, lc_lo = NONE, lc_hi = -1;
#pragma unroll
        for (int h = 0; h < HALVES; ++h) {
            const int last = qlen[h] + tpad[h] - 1;
            own[h] = qlen[h] > 0 && last / span == pass && (last % span) / R == t;
            if (own[h]) tlim = min(tlim, tlen[h] - 1);
            if (qlen[h] > 0) {
                lc_lo = min(lc_lo, tlen[h] - 1);
                lc_hi = max(lc_hi, tlen[h] - 1);
            }
        }
        const bool track_row = (flags & TE_FREE) && (own[0] || own[HALVES - 1]);
        V rb = neg;
        int rcol[HALVES];
        Best cand[HALVES];
#pragma unroll
        for (int h = 0; h < HALVES; ++h) {
            rcol[h] = NONE;
            cand[h] = Best{SCORE_NONE, NONE, NONE};
        }
#else
        V hdiag = bias;  // H(row0 - 1, j - 1)
#endif
        const bool from_scratch = t == 0 && pass > 0;
        const bool to_scratch = t == G - 1 && pass + 1 < passes;
        // Each thread reads its own columns' codes: pointers at column j (may run outside
        // the sequence; only read while inside it).
        const u8* tp[HALVES];
#pragma unroll
        for (int h = 0; h < HALVES; ++h) tp[h] = ts[h] - COLS * DIR * t;

        int steps = pcols > 0 ? (pcols + COLS - 1) / COLS + G - 1 : 0;
        steps = __reduce_max_sync(FULL, steps);
        bool done = pcols == 0;
        // Target codes and the boundary row from scratch are fetched one step ahead, so
        // their memory latency hides behind a step's arithmetic (few warps share an SM).
        u32 nc[COLS][HALVES];
        V nh[COLS], nf[COLS];
#pragma unroll
        for (int c = 0; c < COLS; ++c) {
            nh[c] = bias;
            nf[c] = 0;
        }
        auto fetch = [&](int jn) {
#pragma unroll
            for (int h = 0; h < HALVES; ++h) {
#pragma unroll
                for (int c = 0; c < COLS; ++c)
                    nc[c][h] = (unsigned)(jn + c) < (unsigned)tlen[h] ? tp[h][DIR * c] : pad;
                tp[h] += COLS * DIR;
            }
#if MODE
            // The first pass's row above: the top border H(0, j), and the F it hands down,
            // F(1, j) = H(0, j) - B.
            if (t == 0 && pass == 0) {
#pragma unroll
                for (int c = 0; c < COLS; ++c) {
                    nh[c] = top(jn + c);
                    nf[c] = open_f(nh[c]);
                }
            }
#endif
            if (from_scratch) {
                int avail = pcols;
#if PIPELINE
                // Wait until the pass before has written these columns (or finished).
                const int need = min(jn + COLS, pcols);
                if (need > known && usable == NONE) {
                    u32 v;
                    while (true) {
                        v = *(volatile u32*)rd_progress;
                        if ((int)(v & ~FINAL_BIT) >= need || (v & FINAL_BIT)) break;
                        __nanosleep(100);
                    }
                    __threadfence();
                    known = (int)(v & ~FINAL_BIT);
                    if (v & FINAL_BIT) usable = known;
                }
                avail = min(avail, usable);
#endif
#pragma unroll
                for (int c = 0; c < COLS; ++c) {
                    nh[c] = bias;
                    nf[c] = 0;
                    if ((unsigned)(jn + c) < (unsigned)avail) {
                        nh[c] = (V)__ldcg(rd + 2 * (size_t)(jn + c) * ns);
                        nf[c] = (V)__ldcg(rd + ns + 2 * (size_t)(jn + c) * ns);
                    }
                }
            }
        };
        fetch(-COLS * t);
        // Values from thread t-1 for this step (its bottom row), shuffled at the end of the
        // last step.
        V in_h[COLS], in_f[COLS];
#pragma unroll
        for (int c = 0; c < COLS; ++c) {
#if MODE
            in_h[c] = hdiag;
            in_f[c] = neg;
#else
            in_h[c] = bias;
            in_f[c] = 0;
#endif
        }
        for (int s = 0; s < steps; ++s) {
            const int j = COLS * (s - t);
            // Scores of every column first: the shared-memory loads overlap the fetch below.
            u32 wa[COLS][WORDS], wb[COLS][WORDS];
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
#pragma unroll
                for (int q = 0; q < WORDS; ++q) wb[c][q] = 0;
                load_scores(prof_a, nc[c][0], cstride, kstride, wa[c]);
#if PACKED
                load_scores(prof_b, nc[c][1], cstride, kstride, wb[c]);
#endif
            }
            if (t == 0) {
                // The first row's neighbours: the zero state, or the last pass's bottom row.
#pragma unroll
                for (int c = 0; c < COLS; ++c) {
                    in_h[c] = nh[c];
                    in_f[c] = nf[c];
                }
            }
            fetch(j + COLS);
            // Column j + c from column j + c - 1 (the last step's last column for c = 0);
            // diag = H(row0 - 1, j + c - 1). Every column's H stays live for the tie rule.
            V H[COLS][R];
            V cm[COLS], out_f[COLS];
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                V f = in_f[c];
                cm[c] = column(wa[c], wb[c], c == 0 ? hdiag : in_h[c - 1], f, c == 0 ? Hlast : H[c - 1], H[c], E,
                               bias, mext);
                out_f[c] = f;
            }
#if MODE
            if (j < 0) {
                // The lead-in: back to the left border (H(i, 0), E from it, no F to pass on).
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    const V l = left(row0 + r);
#pragma unroll
                    for (int c = 0; c < COLS; ++c) H[c][r] = l;
                    E[r] = open_e(l);
                }
#pragma unroll
                for (int c = 0; c < COLS; ++c) out_f[c] = neg;
            }
            if (track_row) {
                V lastv[COLS];
#pragma unroll
                for (int c = 0; c < COLS; ++c) lastv[c] = H[c][R - 1];
                if (j >= 0 && j + COLS <= tlim) {
#pragma unroll
                    for (int c = 0; c < COLS; ++c) {
#if PACKED
                        bool keep_hi, keep_lo;
                        rb = __vibmax_s16x2(rb, lastv[c], &keep_hi, &keep_lo);
                        rcol[0] = keep_lo ? rcol[0] : j + c;
                        rcol[1] = keep_hi ? rcol[1] : j + c;
#else
                        if (lane_of(lastv[c], 0) > lane_of(rb, 0)) {
                            rb = lastv[c];
                            rcol[0] = j + c;
                        }
#endif
                    }
                } else {
#pragma unroll
                    for (int c = 0; c < COLS; ++c) {
#pragma unroll
                        for (int h = 0; h < HALVES; ++h) {
                            const int v = lane_of(lastv[c], h);
                            if (own[h] && j + c >= 0 && j + c < tlen[h] - 1 && v > lane_of(rb, h)) {
                                rb = with_lane(rb, h, v);
                                rcol[h] = j + c;
                            }
                        }
                    }
                }
            }
            if (j + COLS > lc_lo && j <= lc_hi) {
#pragma unroll
                for (int c = 0; c < COLS; ++c) {
#pragma unroll
                    for (int h = 0; h < HALVES; ++h) {
                        if (qlen[h] > 0 && j + c == tlen[h] - 1) {
#pragma unroll
                            for (int r = 0; r < R; ++r) {
                                const int i = row0 + r - tpad[h];
                                const bool ok = flags & QE_FREE ? i >= 0 && i < qlen[h] : i == qlen[h] - 1;
                                const Best x = Best{lane_of(H[c][r], h), j + c, i};
                                if (ok && better(x, cand[h])) cand[h] = x;
                            }
                        }
                    }
                }
            }
#endif
            hdiag = in_h[COLS - 1];
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                in_h[c] = (V)__shfl_up_sync(FULL, (u32)H[c][R - 1], 1, G);
                in_f[c] = (V)__shfl_up_sync(FULL, (u32)out_f[c], 1, G);
            }

            // The tie rule: a strict improvement in any column (rare) takes the slow path.
            V top = best;
#pragma unroll
            for (int c = 0; c < COLS; c += 2) top = c + 1 < COLS ? max3(top, cm[c], cm[c + 1]) : max2(top, cm[c]);
            if (!MODE && top != best && !done) {
#pragma unroll
                for (int c = 0; c < COLS; ++c) improve(cm[c], H[c], j + c, best, bcol, brow);
            }
            if (to_scratch) {
#pragma unroll
                for (int c = 0; c < COLS; ++c) {
                    if (j + c >= 0 && j + c < pcols) {
                        __stcg(wr + 2 * (size_t)(j + c) * ns, (u32)H[c][R - 1]);
                        __stcg(wr + ns + 2 * (size_t)(j + c) * ns, (u32)out_f[c]);
                    }
                }
#if PIPELINE
                // Published every 8 steps (16 columns): the next pass runs ~64 behind.
                written = max(written, min(j + COLS, pcols));
                if ((s & 7) == 7) {
                    __threadfence();
                    atomicExch(wr_progress, (u32)written);
                }
#endif
            }
#pragma unroll
            for (int r = 0; r < R; ++r) Hlast[r] = H[COLS - 1][r];
#if MODE
            // Reverse mode with a free last row: stop once every sought half's owner of the
            // last row has reached the goal there (checked every 8 columns; the owner is the
            // last thread of the group to compute any real cell of a column).
            if (REVERSE && (flags & TE_FREE) && (s & (8 / COLS - 1)) == 8 / COLS - 1) {
                bool all = true;
#pragma unroll
                for (int h = 0; h < HALVES; ++h) {
                    const int fc =
                        group_min(own[h] && rcol[h] != NONE && lane_of(rb, h) >= goal[h] ? rcol[h] : NONE, G);
                    // Sought until found, in the pass of its last row (before it the row is
                    // ahead, after it there is nothing to find), or until the group's last
                    // thread has passed the half's last column (its start lies there).
                    const bool passed = COLS * (s - (G - 1)) + COLS - 1 >= tlen[h] - 1;
                    if (sought[h] && (qlen[h] + tpad[h] - 1) / span >= pass && fc == NONE && !passed)
                        all = false;
                }
                done = done || all;
                if (__all_sync(FULL, done)) break;
            }
#endif
            // Reverse mode: stop once every half's first column reaching the goal is
            // settled, i.e. the last thread of the group has passed it (checked every 8
            // columns).
            if (REVERSE && !MODE && (s & (8 / COLS - 1)) == 8 / COLS - 1) {
                bool all = true;
#pragma unroll
                for (int h = 0; h < HALVES; ++h) {
                    int fc = lane_of(best, h) - bias_i >= goal[h] ? bcol[h] : NONE;
                    fc = group_min(fc, G);
                    if (goal[h] > 0 && !(COLS * (s - (G - 1)) + COLS - 1 >= fc)) all = false;
                }
                done = done || all;
                if (__all_sync(FULL, done)) break;
            }
        }

#if PIPELINE
        if (to_scratch) {
            __threadfence();
            atomicExch(wr_progress, FINAL_BIT | (u32)written);
        }
#endif
        // This pass's best per half, then merged into the running best.
#pragma unroll
        for (int h = 0; h < HALVES; ++h) {
#if MODE
            Best b = cand[h];
            if (own[h] && (flags & TE_FREE) && rcol[h] != NONE) {
                const Best x = Best{lane_of(rb, h), rcol[h], qlen[h] - 1};
                if (better(x, b)) b = x;
            }
            b = group_best(b, G);
            if (better(b, run[h])) run[h] = b;
#else
            const int score = lane_of(best, h) - bias_i;
            // bcol: a cell of this thread's rows made the best (not the carried threshold).
            const bool found = bcol[h] != NONE && (REVERSE ? goal[h] > 0 && score >= goal[h] : score > 0);
            Best b = found ? Best{score, bcol[h], row0 + brow[h]} : Best{0, NONE, NONE};
            b = group_best(b, G);
            if (better(b, run[h])) run[h] = b;
            if (!REVERSE && lane_of(best, h) > a.overflow_limit) overflow |= 1u << h;
#endif
        }
        __syncwarp();
    }

    // A half that overflowed in any thread of the group is flagged for its own pair.
    for (int o = G >> 1; o > 0; o >>= 1) overflow |= __shfl_xor_sync(FULL, overflow, o, G);
#if PIPELINE
    // This item's best per half (a pass past the reverse rectangle's finds nothing); the
    // entry's last item to finish merges them by the tie rule, as the passes of one group
    // do, and writes the pairs' results.
    int last = 0;
    if (t == 0) {
#pragma unroll
        for (int h = 0; h < HALVES; ++h)
            recs[((size_t)entry * levels + item_pass) * HALVES + h] =
                make_int4(run[h].score, run[h].col, run[h].row, (int)((overflow >> h) & 1u));
        __threadfence();
        last = atomicAdd(&finished[entry], 1u) == (u32)task.z - 1;
    }
    if (__shfl_sync(FULL, last, 0) && t == 0) {
        __threadfence();
#pragma unroll
        for (int h = 0; h < HALVES; ++h) {
            if (pidx[h] < 0) continue;
            Best b = Best{MODE ? SCORE_NONE : 0, NONE, NONE};
            int flag = 0;
            for (int q = 0; q < task.z; ++q) {
                const int4 r = __ldcg(&recs[((size_t)entry * levels + q) * HALVES + h]);
                flag |= r.w & 1;
                const Best x = Best{r.x, r.y, r.z};
                if ((MODE ? x.col != NONE : x.score > 0) && better(x, b)) b = x;
            }
            if (!MODE && b.score <= 0) b = Best{0, -1, -1};
            a.out[pidx[h]] = make_int4(b.score, b.row, b.col, flag);
        }
    }
    }  // the ticket loop
#else
    if (real_group && t == 0) {
#pragma unroll
        for (int h = 0; h < HALVES; ++h) {
            if (pidx[h] < 0) continue;
            Best b = run[h];
            if (!MODE && b.score <= 0) b = Best{0, -1, -1};
            a.out[pidx[h]] = make_int4(b.score, b.row, b.col, (int)((overflow >> h) & 1u));
        }
    }
#endif
}

extern "C" __global__ void align_pairs(const AlignArgs a, int reverse) {
    if (reverse)
        align_body<true>(a);
    else
        align_body<false>(a);
}

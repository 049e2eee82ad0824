// Traceback paths of reported local alignments on the GPU: one thread (THREADS 1) or one
// warp (THREADS 32, long rectangles) per rectangle fills its directions (4 bits per cell,
// in global memory), and one thread walks back from the end, writing the path as 2-bit
// operations. Both variants compute the same cells in the same order per strip, so their
// directions and paths are the same; they differ in who computes a strip and where its
// words lie. The path rule is src/engine/traceback.rs's (`trace`, the
// specification): the rectangle q[qs..qe] x t[ts..te] is aligned end to end,
//   E(i,j) = max(H(i,j-1) - oe, E(i,j-1) - ext)     target residue against a gap ('D')
//   F(i,j) = max(H(i-1,j) - oe, F(i-1,j) - ext)     query residue against a gap ('I')
//   H(i,j) = max(H(i-1,j-1) + s, E(i,j), F(i,j)),   H(0,0) = 0, other borders -inf
// and walked back taking the diagonal when it attains H, else the 'D' state, else the 'I'
// state; a gap state goes back to H when its open attains it, else it extends.
//
// Strips of ROWS (16) rows in registers run over the shorter side (the rectangle is
// transposed when the query side is longer; the horizontal gap state is then 'I', so the
// tie between gap states follows the kind, not the direction). A cell's nibble: bits 0-1
// where H came from (0 diagonal, 1 horizontal state, 2 vertical state), bit 2 the
// horizontal state opened here, bit 3 the vertical state opened here. A strip's column is
// one 64-bit word. THREADS 1: jobs come sorted so that a warp's 32 rectangles have similar
// shapes; a warp shares one region laid out [strip][column][lane], so every store of a
// column is one coalesced 256-byte line, and the row between strips goes through scratch
// laid out [column][lane] the same way. THREADS 32: a band of 32 strips runs as a
// wavefront over the warp's lanes (lane l one step behind lane l - 1), each strip storing
// the words of a window of columns around the diagonal, and one scratch row per job
// carries a band's bottom to the next.
//
// Output per job: up to ceil((m + n) / 16) words of operations, last first (16 per word,
// 2 bits each: 0 a pair, 1 'D', 2 'I'), and meta = (operations, H(m,n), 1 if the walk ended
// at the start in the H state, 0). The host turns pairs into '=' or 'X' by the residues.
// With PATH_COUNTS (the identity columns alone), the walk counts instead of writing: ops
// holds (identities, gap opens) per job at 2k, and meta's last field the pairs. A pair is an
// identity when its codes are equal and below `idents` (Scoring::identity_codes: 4 under
// DNA, where an ambiguity code mismatches everything, itself included; 255 for proteins).
//
// With MODE (global and semi-global alignments, traceback::trace_mode) the rectangle may
// begin with gaps: its borders are H(i,0) = H(0,i) = -(open + i * ext) = -(oe + (i-1) * ext)
// for i >= 1 (a gap of the side's first i residues; the same on both sides, so the
// transposition keeps them), E(i,0) and F(0,j) -inf. The walk that leaves the rectangle
// through row 0 or column 0 in the H state takes that border's gap back to the corner:
// trace_mode's leading 'D's (row 0) or 'I's (column 0).

typedef unsigned int u32;
typedef unsigned char u8;
typedef unsigned long long u64;

#ifndef ROWS
#define ROWS 16
#endif
#define NEG (-(1 << 29))
#ifndef MODE
#define MODE 0
#endif
#ifndef THREADS
#define THREADS 1
#endif
// Rows of one band of the warp variant: a strip per lane.
#define BAND (32 * ROWS)

// A strip's registers before its first column: H(i0 + r + 1, 0) and E(i0 + r + 1, 0) of its
// rows, their residues' matrix rows (padding past the rectangle), and H(i0, 0), the
// diagonal of its first column.
__device__ __forceinline__ void strip_start(int i0, int rows, const u8* rs, int pad, bool tr, int nc1, int oe,
                                            int ext, int (&hl)[ROWS], int (&e)[ROWS], int (&rowbase)[ROWS],
                                            int& diag) {
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
#if MODE
        hl[r] = -(oe + (i0 + r) * ext);
#else
        hl[r] = NEG;
#endif
        e[r] = NEG;
        const int rc = i0 + r < rows ? rs[i0 + r] : pad;
        rowbase[r] = tr ? rc : rc * nc1;
    }
#if MODE
    diag = i0 == 0 ? 0 : -(oe + (i0 - 1) * ext);
#else
    diag = i0 == 0 ? 0 : NEG;
#endif
}

// The border above the first strip at column j (0-based): (H(0, j + 1), F(0, j + 1)).
__device__ __forceinline__ int2 top_border(int j, int oe, int ext) {
#if MODE
    return make_int2(-(oe + j * ext), NEG);
#else
    return make_int2(NEG, NEG);
#endif
}

// One column of a strip: its ROWS cells against the column residue `cc` (its matrix
// offset), from the row above (up, fup); `diag` carries H of the row above one column
// back. Returns the column's direction word; (hu, f) become the strip's bottom H and F.
__device__ __forceinline__ u64 strip_column(int (&hl)[ROWS], int (&e)[ROWS], const int (&rowbase)[ROWS],
                                            const signed char* mat, int cc, int& diag, int up, int fup, int oe,
                                            int ext, int tie, int& hu, int& f) {
    int hd = diag;
    diag = up;
    hu = up;
    f = fup;
    u32 lo = 0, hi = 0;
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        const int s = mat[rowbase[r] + cc];
        bool h_open, v_open, from_d;
        e[r] = __vibmax_s32(hl[r] - oe, e[r] - ext, &h_open);
        f = __vibmax_s32(hu - oe, f - ext, &v_open);
        const int gap = max(e[r], f);
        const u32 gap_from = e[r] + tie > f ? 1u : 2u;
        const int h = __vibmax_s32(hd + s, gap, &from_d);
        const u32 nib = (from_d ? 0u : gap_from) | (h_open ? 4u : 0u) | (v_open ? 8u : 0u);
        if (r < 8) {
            lo |= nib << (4 * r);
        } else {
            hi |= nib << (4 * (r - 8));
        }
        hd = hl[r];
        hl[r] = h;
        hu = h;
    }
    return ((u64)hi << 32) | lo;
}

// The first column of a warp-variant strip's stored window of `width` columns: centred on
// the rectangle's diagonal at the strip's middle row (src/engine/cuda/path_plan.rs's
// `window_lo`, the same formula).
__device__ __forceinline__ int window_lo(int i0, int rows, int cols, int width) {
    const long long center = (long long)(i0 + ROWS / 2) * cols / rows;
    const long long lo = center - width / 2;
    return (int)(lo < 0 ? 0 : lo > cols - width ? cols - width : lo);
}

// The walk from H(rows-1, cols-1) (0-based) back to before (0, 0), reading the direction
// word of (strip, column) through `word_at` (false: a cell whose word was not stored, the
// walk stops there and meta's third field says 2); writes job k's operations (or counts)
// and meta.
template <class WordAt>
__device__ __forceinline__ void walk(int k, WordAt word_at, int rows, int cols, bool tr, const u8* rs,
                                     const u8* cs, int result, const u64* __restrict__ out_at,
                                     u32* __restrict__ ops, int4* __restrict__ meta, int idents) {
    const u32 h_kind = tr ? 2u : 1u, v_kind = tr ? 1u : 2u;
#ifndef PATH_COUNTS
    u32* out = ops + out_at[k];
    u32 acc = 0;
#else
    // Runs of one gap kind count one open each (a 'D' run next to an 'I' run: two).
    u32 pairs = 0, ident = 0, opens = 0, last = 3;
#endif
    int i = rows - 1, j = cols - 1;
    int state = 0;  // 0 H, 1 horizontal gap state, 2 vertical
    int n = 0;
    int at_strip = -1, at_col = -1;
    u64 word = 0;
    bool missed = false;
    while (i >= 0 && j >= 0) {
        const int strip = i / ROWS;
        if (strip != at_strip || j != at_col) {
            if (!word_at(strip, j, word)) {
                missed = true;
                break;
            }
            at_strip = strip;
            at_col = j;
        }
        const u32 nib = (u32)(word >> (4 * (i % ROWS))) & 15u;
        u32 op = 4;  // none: a change of state
        if (state == 0) {
            const u32 from = nib & 3u;
            if (from == 0) {
                op = 0;
#ifdef PATH_COUNTS
                pairs++;
                ident += rs[i] == cs[j] && (int)rs[i] < idents ? 1u : 0u;
#endif
                i--;
                j--;
            } else {
                state = (int)from;
            }
        } else if (state == 1) {
            op = h_kind;
            if (nib & 4u) state = 0;
            j--;
        } else {
            op = v_kind;
            if (nib & 8u) state = 0;
            i--;
        }
        if (op < 4) {
#ifndef PATH_COUNTS
            acc |= op << (2 * (n & 15));
            if (((n + 1) & 15) == 0) {
                out[n >> 4] = acc;
                acc = 0;
            }
#else
            opens += op != 0 && op != last ? 1u : 0u;
            last = op;
#endif
            n++;
        }
    }
#if MODE
    // Leading gaps: out through row 0 (rows' residues all taken), the columns left are a
    // horizontal gap; through column 0, the rows left a vertical one. The walk arrives
    // there in the H state (the border's cell opens every gap state next to it).
    if (!missed && state == 0 && (i < 0) != (j < 0)) {
        const u32 op = i < 0 ? h_kind : v_kind;
        for (int left = (i < 0 ? j : i) + 1; left > 0; left--) {
#ifndef PATH_COUNTS
            acc |= op << (2 * (n & 15));
            if (((n + 1) & 15) == 0) {
                out[n >> 4] = acc;
                acc = 0;
            }
#else
            opens += op != last ? 1u : 0u;
            last = op;
#endif
            n++;
        }
        i = -1;
        j = -1;
    }
#endif
    const int ended = missed ? 2 : (i == -1 && j == -1 && state == 0) ? 1 : 0;
#ifndef PATH_COUNTS
    if (n & 15) out[n >> 4] = acc;
    meta[k] = make_int4(n, result, ended, 0);
#else
    ops[2 * (u64)k] = ident;
    ops[2 * (u64)k + 1] = opens;
    meta[k] = make_int4(n, result, ended, (int)pairs);
#endif
}

// jobs[k] = (query offset in seqs, target offset, m, n); the launch covers jobs
// [first, first + njobs). THREADS 1: first is a multiple of 32, and per warp w (w = k / 32)
// region[w] = (first word of its directions in dirs, columns (its longest side) | first
// scratch cell << 32). THREADS 32: per job region[k] = (first word of its directions,
// first scratch cell | window columns << 40). out_at[k]: first word of job k in ops.
extern "C" __global__ void __launch_bounds__(128)
    path_trace(const uint4* __restrict__ jobs, int first, int njobs, const ulonglong2* __restrict__ region,
               const u8* __restrict__ seqs, const signed char* __restrict__ matrix, int nc1, int oe, int ext,
               u64* __restrict__ dirs, int2* __restrict__ scratch, const u64* __restrict__ out_at,
               u32* __restrict__ ops, int4* __restrict__ meta, int idents) {
    extern __shared__ signed char mat[];
    for (int x = threadIdx.x; x < nc1 * nc1; x += blockDim.x) mat[x] = matrix[x];
    __syncthreads();
#if THREADS == 1
    const int k = first + blockIdx.x * blockDim.x + threadIdx.x;
#else
    const int k = first + (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5);
#endif
    if (k >= first + njobs) return;
    const uint4 job = jobs[k];
    const bool tr = job.z > job.w;  // rows walk the target
    const u8* rs = seqs + (tr ? job.y : job.x);
    const u8* cs = seqs + (tr ? job.x : job.y);
    const int rows = tr ? job.w : job.z;
    const int cols = tr ? job.z : job.w;
    const int lane = threadIdx.x & 31;
    const int pad = nc1 - 1;
    // Ties between the gap states: 'D' first. Not transposed, 'D' is horizontal (e >= f
    // picks it); transposed, it is vertical (e > f is needed for the horizontal one).
    const int tie = tr ? 0 : 1;
    const int cstep = tr ? nc1 : 1;
    int result = NEG;
    int hl[ROWS], e[ROWS], rowbase[ROWS], diag;

#if THREADS == 1
    const ulonglong2 reg = region[k >> 5];
    const u64 stride = (u64)(u32)(reg.y & 0xffffffffu);  // columns of the warp's region
    u64* dw = dirs + reg.x + lane;
    int2* sw = scratch + (reg.y >> 32) + lane;
    for (int i0 = 0, strip = 0; i0 < rows; i0 += ROWS, strip++) {
        strip_start(i0, rows, rs, pad, tr, nc1, oe, ext, hl, e, rowbase, diag);
        const bool last_strip = i0 + ROWS >= rows;
        u64* col_word = dw + (u64)strip * stride * 32;
        // The next column's residue and row above are loaded a column ahead: a thread has
        // few warps beside it to hide a load behind.
        int c_next = cs[0];
        int2 above_next = i0 > 0 ? sw[0] : top_border(0, oe, ext);
        for (int j = 0; j < cols; j++) {
            const int2 above = above_next;
            const int cc = c_next * cstep;
            if (j + 1 < cols) {
                c_next = cs[j + 1];
                above_next = i0 > 0 ? sw[(u64)(j + 1) * 32] : top_border(j + 1, oe, ext);
            }
            int hu, f;
            col_word[(u64)j * 32] = strip_column(hl, e, rowbase, mat, cc, diag, above.x, above.y, oe, ext, tie, hu, f);
            if (!last_strip) sw[(u64)j * 32] = make_int2(hu, f);
        }
        if (last_strip) {
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                if (i0 + r == rows - 1) result = hl[r];
            }
        }
    }
    walk(
        k,
        [&](int strip, int j, u64& w) {
            w = dw[((u64)strip * stride + j) * 32];
            return true;
        },
        rows, cols, tr, rs, cs, result, out_at, ops, meta, idents);
#else
    // A warp per rectangle: bands of BAND rows, lane l holding the band's strip l. Lane l
    // takes column t - l at step t, so the row above its strip (lane l - 1's bottom of the
    // same column, one step earlier) comes by a shuffle; lane 0 reads it from the band
    // above through the job's scratch row, which lane 31 writes. Every cell is computed,
    // but a strip stores only the words of a window of `width` columns around the
    // rectangle's diagonal ([strip][column - window_lo]): a path leaves it only through
    // long gaps, and a walk that would read outside it reports a miss (the host traces
    // that pair again with every column stored). So a long rectangle holds a few MB, not
    // 4 bits of every cell, and thousands of warps fit at once.
    const ulonglong2 reg = region[k];
    u64* dw = dirs + reg.x;
    int2* sw = scratch + (reg.y & ((1ull << 40) - 1));
    const int width = (int)(reg.y >> 40);
    for (int b0 = 0; b0 < rows; b0 += BAND) {
        const int i0 = b0 + lane * ROWS;
        strip_start(i0, rows, rs, pad, tr, nc1, oe, ext, hl, e, rowbase, diag);
        const bool last_band = b0 + BAND >= rows;
        // Lanes past the rectangle's last row compute padding and store nothing.
        const int lo = i0 < rows ? window_lo(i0, rows, cols, width) : cols;
        u64* strip_word = dw + (u64)(i0 / ROWS) * width;
        int hu = NEG, f = NEG;
        int c_next = cs[0];
        int2 above_next = lane == 0 ? (b0 > 0 ? sw[0] : top_border(0, oe, ext)) : make_int2(NEG, NEG);
        for (int t = 0; t < cols + 31; t++) {
            const int up = __shfl_up_sync(0xffffffffu, hu, 1);
            const int fup = __shfl_up_sync(0xffffffffu, f, 1);
            const int j = t - lane;
            if (j >= 0 && j < cols) {
                const int2 above = lane == 0 ? above_next : make_int2(up, fup);
                const int cc = c_next * cstep;
                if (j + 1 < cols) {
                    c_next = cs[j + 1];
                    if (lane == 0) above_next = b0 > 0 ? sw[j + 1] : top_border(j + 1, oe, ext);
                }
                const u64 word = strip_column(hl, e, rowbase, mat, cc, diag, above.x, above.y, oe, ext, tie, hu, f);
                if (j >= lo && j < lo + width) strip_word[j - lo] = word;
                if (lane == 31 && !last_band) sw[j] = make_int2(hu, f);
            }
        }
        if (last_band && lane == (rows - 1 - b0) / ROWS) {
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                if (b0 + lane * ROWS + r == rows - 1) result = hl[r];
            }
        }
        // Lane 31's scratch row and every lane's directions, seen by the lanes after.
        __syncwarp();
    }
    result = __shfl_sync(0xffffffffu, result, ((rows - 1) % BAND) / ROWS);
    if (lane != 0) return;
    walk(
        k,
        [&](int strip, int j, u64& w) {
            const int lo = window_lo(strip * ROWS, rows, cols, width);
            if (j < lo || j >= lo + width) return false;
            w = dw[(u64)strip * width + (j - lo)];
            return true;
        },
        rows, cols, tr, rs, cs, result, out_at, ops, meta, idents);
#endif
}

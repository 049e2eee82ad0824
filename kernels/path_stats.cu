// Statistics of the traceback path of reported local alignments, without storing directions:
// one forward pass over the alignment's rectangle that carries, per DP state, the counters
// of the path the path rule picks (src/engine/traceback.rs: the scalar `path_stats` is the
// specification this kernel follows step for step).
//
// The rectangle q[qs..qe] x t[ts..te] is aligned end to end (anchored DP, no restarts):
//   E(i,j) = max(H(i,j-1) - oe, E(i,j-1) - ext)     target residue against a gap ('D')
//   F(i,j) = max(H(i-1,j) - oe, F(i-1,j) - ext)     query residue against a gap ('I')
//   H(i,j) = max(H(i-1,j-1) + s, E(i,j), F(i,j)),   H(0,0) = 0, other borders -inf
// Choices, as the traceback makes them: H takes the diagonal when it attains the maximum,
// else the 'D' state when it does, else the 'I' state; a gap state opens from H when that
// attains its maximum, else extends. Counters per state: pairs | nident << 16 (one word),
// and gap opens | the kind of the path's last column << 30 (0 pair, 1 'D', 2 'I'): a gap
// opened from an H whose path ends in a gap of the same kind continues that run (possible
// only with a free gap open), so opens count runs. H(m,n) is returned so the host can check
// it equals the reported score.
//
// One thread per rectangle, ROWS rows per strip in registers, strips run over the shorter
// side (the rectangle is transposed when the query side is longer: the 'D' state is then the
// vertical one, so the priority between the gap states follows the state, not the
// direction). Between strips the last row goes through `scratch`.

typedef unsigned int u32;
typedef unsigned char u8;

#ifndef ROWS
#define ROWS 16
#endif
#define NEG (-(1 << 29))
#define OPENS 0x3fffffffu

// The gap-open word of a gap of `kind` opened from an H whose word is `b`.
__device__ __forceinline__ u32 open_gap(u32 b, u32 kind) {
    return ((b & OPENS) + ((b >> 30) != kind ? 1u : 0u)) | (kind << 30);
}

// jobs[k] = (offset of the rectangle's query codes in seqs, offset of its target codes,
// m = query side, n = target side), longest first; out[index[k]] = (pairs, nident,
// gap opens, H(m,n)). scratch_at[k] = first scratch column of job k (jobs of one strip
// have none). m, n < 65536 (the host sends larger rectangles elsewhere).
extern "C" __global__ void __launch_bounds__(128) path_stats(const uint4* __restrict__ jobs,
                                                             const u32* __restrict__ index, int njobs,
                                                             const u8* __restrict__ seqs,
                                                             const signed char* __restrict__ matrix, int nc1,
                                                             int oe, int ext, int4* __restrict__ out,
                                                             uint4* __restrict__ scratch_h,
                                                             uint2* __restrict__ scratch_b,
                                                             const unsigned long long* __restrict__ scratch_at) {
    extern __shared__ signed char mat[];
    for (int x = threadIdx.x; x < nc1 * nc1; x += blockDim.x) mat[x] = matrix[x];
    __syncthreads();
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= njobs) return;
    const uint4 job = jobs[k];
    const bool tr = job.z > job.w;  // rows walk the target
    const u8* rs = seqs + (tr ? job.y : job.x);
    const u8* cs = seqs + (tr ? job.x : job.y);
    const int rows = tr ? job.w : job.z;
    const int cols = tr ? job.z : job.w;
    uint4* sh = scratch_h + scratch_at[k];
    uint2* sb = scratch_b + scratch_at[k];
    const int pad = nc1 - 1;
    // Kinds of the horizontal and vertical gap states: 'D' (1) and 'I' (2), swapped when
    // the rectangle is transposed.
    const u32 hkind = tr ? 2u : 1u, vkind = tr ? 1u : 2u;
    int result = NEG;
    u32 res_a = 0, res_b = 0;

    for (int i0 = 0; i0 < rows; i0 += ROWS) {
        int hl[ROWS], e[ROWS];
        u32 ahl[ROWS], bhl[ROWS], ae[ROWS], be[ROWS];
        int rc[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            hl[r] = NEG;  // H(i, 0)
            e[r] = NEG;   // E(i, 0)
            ahl[r] = bhl[r] = ae[r] = be[r] = 0;
            rc[r] = i0 + r < rows ? rs[i0 + r] : pad;
        }
        // H of the row above the strip at the previous column: H(i0, 0).
        int diag = i0 == 0 ? 0 : NEG;
        u32 adiag = 0, bdiag = 0;
        const bool last_strip = i0 + ROWS >= rows;
        for (int j = 0; j < cols; j++) {
            int up = NEG, fup = NEG;
            u32 aup = 0, bup = 0, afup = 0, bfup = 0;
            if (i0 > 0) {
                const uint4 a = sh[j];
                const uint2 b = sb[j];
                up = (int)a.x;
                fup = (int)a.y;
                aup = a.z;
                afup = a.w;
                bup = b.x;
                bfup = b.y;
            }
            const int c = cs[j];
            int hd = diag;
            u32 ad = adiag, bd = bdiag;
            diag = up;
            adiag = aup;
            bdiag = bup;
            int hu = up, f = fup;
            u32 au = aup, bu = bup, af = afup, bf = bfup;
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                const int s = tr ? mat[c * nc1 + rc[r]] : mat[rc[r] * nc1 + c];
                // Horizontal gap state (from the left).
                const int eo = hl[r] - oe, ee = e[r] - ext;
                if (eo >= ee) {
                    e[r] = eo;
                    ae[r] = ahl[r];
                    be[r] = open_gap(bhl[r], hkind);
                } else {
                    e[r] = ee;
                }
                // Vertical gap state (from above).
                const int fo = hu - oe, fe = f - ext;
                if (fo >= fe) {
                    f = fo;
                    af = au;
                    bf = open_gap(bu, vkind);
                } else {
                    f = fe;
                }
                const int d = hd + s;
                int h;
                u32 ah, bh;
                if (d >= e[r] && d >= f) {
                    h = d;
                    ah = ad + 1u + (rc[r] == c ? 0x10000u : 0u);
                    bh = bd & OPENS;
                } else if (tr ? f < e[r] : e[r] >= f) {
                    // The 'D' state is horizontal unless transposed; it wins ties.
                    h = e[r];
                    ah = ae[r];
                    bh = be[r];
                } else {
                    h = f;
                    ah = af;
                    bh = bf;
                }
                hd = hl[r];
                ad = ahl[r];
                bd = bhl[r];
                hl[r] = h;
                ahl[r] = ah;
                bhl[r] = bh;
                hu = h;
                au = ah;
                bu = bh;
            }
            if (!last_strip) {
                sh[j] = make_uint4((u32)hu, (u32)f, au, af);
                sb[j] = make_uint2(bu, bf);
            }
        }
        if (last_strip) {
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                if (i0 + r == rows - 1) {
                    result = hl[r];
                    res_a = ahl[r];
                    res_b = bhl[r];
                }
            }
        }
    }
    out[index[k]] = make_int4((int)(res_a & 0xffffu), (int)(res_a >> 16), (int)(res_b & OPENS), result);
}

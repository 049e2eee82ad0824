// PairHMM forward sums (GATK's model as GKL computes it; see src/pairhmm/model.rs), one warp
// per read-haplotype pair. The read is cut into stripes of 32 rows, lane k holding row
// stripe*32 + k; a stripe sweeps the haplotype along anti-diagonals (at step t lane k is at
// column t - k + 1), so the cell above comes from lane k-1 by a shuffle and the cell to the
// left is the lane's own previous cell. The last row of a stripe goes through a per-warp
// buffer in global memory to lane 0 of the next stripe.
//
// One source, two precisions: REAL is float by default, double with -DPAIRHMM_DOUBLE=1.
// The host uploads the probability tables of that precision (phred -> probability, and the
// match->match table indexed by max*(max+1)/2 + min of the insertion and deletion qualities)
// and computes log10 and the threshold test from the scaled sums written to `out`.
//
// Pair descriptor (5 x u32): read offset, read length, haplotype offset, haplotype length,
// output index. `reads` holds 5 arrays of `read_total` bytes each: base codes (A C G T =
// 0..3, N = 4), base, insertion, deletion and gap-continuation qualities (phred); a read's
// bytes are at its offset in each. Haplotype base codes are at their offset in `haps`.

#ifndef PAIRHMM_DOUBLE
#define PAIRHMM_DOUBLE 0
#endif

#if PAIRHMM_DOUBLE
typedef double real;
#define INITIAL 0x1p1020 /* 2^1020 */
#else
typedef float real;
#define INITIAL 0x1p120f /* 2^120 */
#endif

#define FULL_MASK 0xffffffffu

// Blocks of 256 threads per SM the compiler must fit (registers), a tuning knob.
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif

extern "C" __global__ void __launch_bounds__(256, MIN_BLOCKS) pairhmm_forward(const unsigned int* __restrict__ pairs, int npairs,
                                           const unsigned char* __restrict__ reads,
                                           unsigned int read_total,
                                           const unsigned char* __restrict__ haps,
                                           const real* __restrict__ ph2pr,
                                           const real* __restrict__ match_to_match,
                                           real* __restrict__ scratch, int scratch_stride,
                                           real* __restrict__ out) {
    const int lane = threadIdx.x & 31;
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int nwarps = (gridDim.x * blockDim.x) >> 5;
    real* buf_m = scratch + (size_t)warp * 3 * scratch_stride;
    real* buf_i = buf_m + scratch_stride;
    real* buf_d = buf_i + scratch_stride;

    for (int p = warp; p < npairs; p += nwarps) {
        const unsigned int* desc = pairs + 5 * (size_t)p;
        const int rlen = (int)desc[1];
        const int hlen = (int)desc[3];
        const unsigned char* rbase = reads + desc[0];
        const unsigned char* hap = haps + desc[2];
        // Row 0: no match or insertion yet, free deletions before the read in every column.
        // INITIAL / hlen, scaled as GKL scales it: division in the working precision.
        const real d0 = INITIAL / (real)hlen;
        for (int c = lane; c <= hlen; c += 32) {
            buf_m[c] = 0;
            buf_i[c] = 0;
            buf_d[c] = d0;
        }
        __syncwarp();
        real sum = 0;
        for (int r0 = 0; r0 < rlen; r0 += 32) {
            const int row = r0 + lane;
            const bool active = row < rlen;
            real em = 0, ex = 0, mm = 0, gm = 0, mi = 0, md = 0, ext = 0;
            int rb = 0;
            if (active) {
                rb = rbase[row];
                const int q = rbase[read_total + row] & 127;
                const int qi = rbase[2 * (size_t)read_total + row] & 127;
                const int qd = rbase[3 * (size_t)read_total + row] & 127;
                const int qc = rbase[4 * (size_t)read_total + row] & 127;
                const real e = ph2pr[q];
                em = (real)1 - e;
                ex = e / (real)3;
                const int hi = qi > qd ? qi : qd;
                const int lo = qi > qd ? qd : qi;
                mm = match_to_match[hi * (hi + 1) / 2 + lo];
                ext = ph2pr[qc];
                gm = (real)1 - ext;
                mi = ph2pr[qi];
                md = ph2pr[qd];
            }
            if (lane == 0 && r0 > 0) buf_d[0] = 0;  // column 0 below row 0
            __syncwarp();
            // The lane's previous cell (left neighbour), the row above at the previous column.
            real m_left = 0, i_left = 0, d_left = 0;
            real diag_m = 0, diag_i = 0, diag_d = 0;
            if (lane == 0) {
                diag_m = buf_m[0];
                diag_i = buf_i[0];
                diag_d = buf_d[0];
            }
            const int last_row_lane = rlen - 1 - r0;  // lane holding the read's last row
            const int steps = hlen + (rlen - r0 < 32 ? rlen - r0 : 32) - 1;
            // Loads one step ahead (their latency overlaps the current step): the haplotype
            // base of the lane's next column, and for lane 0 the row above at its next column.
            int hb_next = (lane == 0 && hlen >= 1) ? hap[0] : 0;
            real next_m = 0, next_i = 0, next_d = 0;
            if (lane == 0) {
                const int c1 = 1 <= hlen ? 1 : hlen;
                next_m = buf_m[c1];
                next_i = buf_i[c1];
                next_d = buf_d[c1];
            }
            for (int t = 0; t < steps; ++t) {
                const int c = t - lane + 1;
                const int hb = hb_next;
                if (c >= 0 && c < hlen) hb_next = hap[c];  // column c + 1
                real up_m = __shfl_up_sync(FULL_MASK, m_left, 1);
                real up_i = __shfl_up_sync(FULL_MASK, i_left, 1);
                real up_d = __shfl_up_sync(FULL_MASK, d_left, 1);
                if (lane == 0) {
                    up_m = next_m;
                    up_i = next_i;
                    up_d = next_d;
                    // Column c + 1 of the row above; lane 31 writes only columns <= c - 31.
                    const int cn = c + 1 <= hlen ? c + 1 : hlen;
                    next_m = buf_m[cn];
                    next_i = buf_i[cn];
                    next_d = buf_d[cn];
                }
                if (active && c >= 1 && c <= hlen) {
                    const real emit = (rb == hb || rb == 4 || hb == 4) ? em : ex;
                    const real m = emit * (diag_m * mm + (diag_i + diag_d) * gm);
                    const real i = up_m * mi + up_i * ext;
                    const real d = m_left * md + d_left * ext;
                    m_left = m;
                    i_left = i;
                    d_left = d;
                    if (lane == last_row_lane) sum += m + i;
                    if (lane == 31) {
                        buf_m[c] = m;
                        buf_i[c] = i;
                        buf_d[c] = d;
                    }
                }
                diag_m = up_m;
                diag_i = up_i;
                diag_d = up_d;
            }
            __syncwarp();
        }
        const int final_lane = (rlen - 1) & 31;
        sum = __shfl_sync(FULL_MASK, sum, final_lane);
        if (lane == 0) out[desc[4]] = sum;
        __syncwarp();
    }
}

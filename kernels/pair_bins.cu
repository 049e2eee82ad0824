// A piece of pairs binned on the GPU for kernels/align.cu (host side:
// src/engine/cuda/gpu_bins.rs). The host uploads the residues and the piece's bounds (2n + 1
// offsets, 32-bit) and a table giving each query length its region (a kernel
// shape); these kernels write the align kernel's pair table and its group table, with the
// pairs of each region ordered by target length, longest first (a counting sort on buckets of
// target length), so the host does no per-pair work beyond copying the residues. Why: short
// pairs spent ten times longer in the host's per-pair binning than on the GPU.
//
//   bins_count: pair table; histogram of (region, length bucket) over the non-empty pairs
//   bins_scan:  per region, the buckets' first positions in the group table (exclusive scan
//               from the region's first group entry, which the host knows from its counts)
//   bins_place: each pair into the next position of its bucket
//
// Inside a bucket the order depends on the atomics; each pair's result does not, since the
// align kernel writes results by pair index and aligns every pair alone.

typedef unsigned int u32;

// Target-length buckets per region (one block of bins_scan).
#define BUCKETS 256

// Must match `BinArgs` in src/engine/cuda/align.rs field for field.
struct BinArgs {
    const u32* bounds;    // 2n + 1 offsets into the piece's residues, the first 0
    int n;
    int group_entries;    // entries of the group table (bins_count writes them -1 first)
    const int* region_of; // by query length 0..max_qlen: region, or -1 (left out)
    int max_qlen;
    int shift;            // bucket = min(tlen >> shift, BUCKETS - 1)
    uint4* descs;         // per pair: (query offset, target offset, qlen, tlen)
    u32* hist;            // regions x BUCKETS counters, zeroed; then cursors
    const int* region_first;  // per region: its first entry in `groups`
    int* groups;          // the align kernel's group table
};

// Counter of pair p's (region, bucket), or -1 for a pair left out (an empty side).
__device__ __forceinline__ int bucket_of(const BinArgs& a, u32 qlen, u32 tlen) {
    if (qlen == 0 || tlen == 0 || qlen > (u32)a.max_qlen) return -1;
    const int r = a.region_of[qlen];
    if (r < 0) return -1;
    const u32 b = min(tlen >> a.shift, (u32)(BUCKETS - 1));
    // Longest first: the largest bucket gets the region's first positions.
    return r * BUCKETS + (BUCKETS - 1 - (int)b);
}

extern "C" __global__ void bins_count(const BinArgs a) {
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    // The table's entries (and its closing one) are -1 until bins_place fills them.
    if (p <= a.group_entries) a.groups[p] = -1;
    if (p >= a.n) return;
    const u32 q0 = a.bounds[2 * p], q1 = a.bounds[2 * p + 1], t1 = a.bounds[2 * p + 2];
    const u32 qlen = q1 - q0, tlen = t1 - q1;
    a.descs[p] = make_uint4(q0, q1, qlen, tlen);
    const int k = bucket_of(a, qlen, tlen);
    if (k >= 0) atomicAdd(&a.hist[k], 1u);
}

// One block of BUCKETS threads per region.
extern "C" __global__ void bins_scan(const BinArgs a) {
    __shared__ u32 s[BUCKETS];
    const int r = blockIdx.x, i = threadIdx.x;
    u32* h = a.hist + (size_t)r * BUCKETS;
    const u32 x = h[i];
    s[i] = x;
    __syncthreads();
    // Inclusive Hillis-Steele scan (256 entries, once per region and piece).
    for (int o = 1; o < BUCKETS; o <<= 1) {
        const u32 y = i >= o ? s[i - o] : 0u;
        __syncthreads();
        s[i] += y;
        __syncthreads();
    }
    h[i] = (u32)a.region_first[r] + s[i] - x;
}

extern "C" __global__ void bins_place(const BinArgs a) {
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= a.n) return;
    const uint4 d = a.descs[p];
    const int k = bucket_of(a, d.z, d.w);
    if (k >= 0) a.groups[atomicAdd(&a.hist[k], 1u)] = p;
}

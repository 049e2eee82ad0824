import pyarrow.csv as csv, swarrow
pairs = csv.read_csv("examples/pairs.tsv", parse_options=csv.ParseOptions(delimiter="\t"))
hits = swarrow.align(pairs, columns="query,target,score,evalue,pident,cigar")
print(hits.num_rows, "pairs aligned")
print(hits.slice(0, 3))

// What every store strategy may read.
struct EpilogueArgs {
  unsigned short* c;
  float* workspace;
  unsigned long long c_map_address;
  unsigned base;
  int m, n, pair_stores;
};

      {
        // Round to {{ELEMENT}}, stage this consumer's {{ROWS}}x{{BLOCK_N}} rows in a
        // 128B-swizzled shared tile (64-column chunks of {{CHUNK_BYTES}} bytes) with
        // stmatrix, then one thread stores the chunks with TMA, which clips
        // them to m x n. The previous tile's store must have read the buffer.
        const unsigned c_tile = base + {{C_OFFSET}}u + consumer * {{CONSUMER_C_BYTES}}u;
        if (thread == 0) {
          {{WAIT_BUFFER}}
        }
        {{SYNC_CONSUMER}}
        const unsigned warp_row = (thread / 32) * 16 + (lane % 8) + 8 * ((lane / 8) % 2);
#pragma unroll
        for (int s = 0; s < {{M_SLICES}}; ++s) {
#pragma unroll
          for (int j = 0; j < {{BLOCK_N}} / 16; ++j) {
            // Lanes 8q..8q+7 address the rows of matrix q: rows 0-7 and
            // 8-15 of the warp's 16, in 8-column chunks 2j and 2j+1;
            // value q packs accumulators 8j+2q and 8j+2q+1.
            const unsigned row = s * 64 + warp_row;
            const unsigned chunk = 2 * j + lane / 16;
            const unsigned offset = (chunk / 8) * {{CHUNK_BYTES}}u + row * 128u + (chunk % 8) * 16u;
            unsigned values[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
              {{PACK}}
            }
            {{STORE_MATRIX}}
          }
        }
        {{FENCE_PROXY}}
        {{SYNC_CONSUMER}}
        if (thread == 0) {
#pragma unroll
          for (int chunk = 0; chunk < {{BLOCK_N}} / 64; ++chunk) {
            {{STORE_CHUNK}}
          }
          {{COMMIT}}
        }
      }

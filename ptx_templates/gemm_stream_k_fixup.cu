      {
        // Stream-K. The workspace holds a flag per consumer warpgroup of
        // each CTA, then their slots of partial sums. A piece that does not end its tile leaves its partial
        // sums in this CTA's workspace slot and raises the slot's flag; the
        // piece that ends the tile adds the slots of the clusters before it
        // that shared the tile, waiting for each flag and lowering it for
        // the next launch. Slots hold each thread's accumulators 4 at a
        // time, thread-minor, so both sides read and write whole lines.
        int* const flags = (int*)workspace;
        float4* const slots = (float4*)(flags + {{FLAG_WORDS}});
        if (w.kt_end != k_tiles) {
          float4* const slot = slots + ((long long)blockIdx.x * {{CONSUMERS}} + consumer) * {{SLOT_VECTORS}};
#pragma unroll
          for (int s = 0; s < {{M_SLICES}}; ++s) {
#pragma unroll
            for (int q = 0; q < {{SLICE_ACCUMULATORS}} / 4; ++q) {
              __stcg(slot + (s * {{SLICE_ACCUMULATORS}} / 4 + q) * 128 + thread,
                     make_float4(acc[s][4 * q], acc[s][4 * q + 1], acc[s][4 * q + 2], acc[s][4 * q + 3]));
            }
          }
          {{SYNC_CONSUMER}}
          if (thread == 0) {
            int* const flag = flags + blockIdx.x * {{CONSUMERS}} + consumer;
            {{RAISE_FLAG}}
          }
          continue;
        }
        for (int sharer = w.kt_begin == 0 ? cluster : first_sharer(schedule, w.unit);
             sharer < cluster; ++sharer) {
          const int peer = (sharer * {{CLUSTER_M}} + (int)rank) * {{CONSUMERS}} + consumer;
          if (thread == 0) {
            int* const flag = flags + peer;
            unsigned raised = 0;
            do {
              {{READ_FLAG}}
            } while (raised == 0);
            *flag = 0;
          }
          {{SYNC_CONSUMER}}
          const float4* const slot = slots + (long long)peer * {{SLOT_VECTORS}};
#pragma unroll
          for (int s = 0; s < {{M_SLICES}}; ++s) {
#pragma unroll
            for (int q = 0; q < {{SLICE_ACCUMULATORS}} / 4; ++q) {
              const float4 part = __ldcg(slot + (s * {{SLICE_ACCUMULATORS}} / 4 + q) * 128 + thread);
              acc[s][4 * q] += part.x;
              acc[s][4 * q + 1] += part.y;
              acc[s][4 * q + 2] += part.z;
              acc[s][4 * q + 3] += part.w;
              // Bounds the loads ptxas keeps in flight (it moves loads
              // across a CTA fence, not across a barrier): all at once spill.
              if (q % 8 == 7) {
                {{SYNC_CONSUMER}}
              }
            }
          }
        }
      }

      {
        // Each thread stores its accumulator pairs where the wgmma fragment
        // layout puts them, clipped to m x n.
        const int row = m0 + {{ROW_OF_THREAD}};
        const int column = n0 + {{COLUMN_OF_THREAD}};
{{STORES}}
      }

//===- WindowsTest.cpp - the window arithmetic both backends walk ---------===//
//
// core/Windows.h on the host: the cuda backend's col2im and pooling
// gradients find the outputs that read an input element with
// outputRow/outputColumn, which the cpu backend never calls, so they are
// checked here against the forward taps, over strides, dilations and
// padding.
//
//===----------------------------------------------------------------------===//

#include "core/Windows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

using namespace parcrt;

namespace {

Window2d makeWindow(int64_t size, int64_t kernel, int64_t stride,
                    int64_t dilation, int64_t before, int64_t after) {
  Window2d w;
  w.height = size;
  w.width = size + 1;
  w.kernel[0] = kernel;
  w.kernel[1] = kernel + 1;
  w.strides[0] = stride;
  w.strides[1] = stride + 1;
  w.dilations[0] = dilation;
  w.dilations[1] = 1;
  w.padding[0] = before;
  w.padding[1] = after;
  w.padding[2] = after;
  w.padding[3] = before;
  auto out = [](int64_t n, int64_t k, int64_t s, int64_t d, int64_t lo,
                int64_t hi) {
    return (n + lo + hi - (d * (k - 1) + 1)) / s + 1;
  };
  w.outHeight = out(w.height, w.kernel[0], w.strides[0], w.dilations[0],
                    w.padding[0], w.padding[2]);
  w.outWidth = out(w.width, w.kernel[1], w.strides[1], w.dilations[1],
                   w.padding[1], w.padding[3]);
  return w;
}

TEST(Windows, OutputOfInvertsTheTaps) {
  int checked = 0;
  for (int64_t kernel : {1, 2, 3})
    for (int64_t stride : {1, 2, 3})
      for (int64_t dilation : {1, 2})
        for (int64_t pad : {0, 1}) {
          Window2d w = makeWindow(7, kernel, stride, dilation, pad, 1 - pad);
          ASSERT_GT(w.outHeight, 0);
          ASSERT_GT(w.outWidth, 0);
          // Every tap that lands inside the image is found back.
          for (int64_t y = 0; y < w.outHeight; ++y)
            for (int64_t ky = 0; ky < w.kernel[0]; ++ky) {
              int64_t r = w.row(y, ky), found = -1;
              if (r < 0 || r >= w.height)
                continue;
              EXPECT_TRUE(w.outputRow(r, ky, found));
              EXPECT_EQ(found, y);
              ++checked;
            }
          for (int64_t x = 0; x < w.outWidth; ++x)
            for (int64_t kx = 0; kx < w.kernel[1]; ++kx) {
              int64_t c = w.column(x, kx), found = -1;
              if (c < 0 || c >= w.width)
                continue;
              EXPECT_TRUE(w.outputColumn(c, kx, found));
              EXPECT_EQ(found, x);
            }
          // And nothing else: what outputRow finds reads that row.
          for (int64_t r = 0; r < w.height; ++r)
            for (int64_t ky = 0; ky < w.kernel[0]; ++ky) {
              int64_t y;
              if (w.outputRow(r, ky, y)) {
                EXPECT_GE(y, 0);
                EXPECT_LT(y, w.outHeight);
                EXPECT_EQ(w.row(y, ky), r);
              }
            }
          for (int64_t c = 0; c < w.width; ++c)
            for (int64_t kx = 0; kx < w.kernel[1]; ++kx) {
              int64_t x;
              if (w.outputColumn(c, kx, x)) {
                EXPECT_LT(x, w.outWidth);
                EXPECT_EQ(w.column(x, kx), c);
              }
            }
        }
  EXPECT_GT(checked, 200);
}

// forEachReader visits exactly the (output, input) pairs forEachTap does,
// from the input's side: what the gathering gradients rely on.
TEST(Windows, ReadersInvertTaps) {
  for (int64_t kernel : {1, 3})
    for (int64_t stride : {1, 2})
      for (int64_t dilation : {1, 2})
        for (int64_t pad : {0, 1}) {
          Window2d w = makeWindow(6, kernel, stride, dilation, pad, pad);
          std::set<std::pair<int64_t, int64_t>> taps, readers;
          for (int64_t y = 0; y < w.outHeight; ++y)
            for (int64_t x = 0; x < w.outWidth; ++x)
              w.forEachTap(y, x, [&](int64_t offset) {
                taps.insert({y * w.outWidth + x, offset});
              });
          for (int64_t r = 0; r < w.height; ++r)
            for (int64_t c = 0; c < w.width; ++c)
              w.forEachReader(r, c,
                              [&](int64_t ky, int64_t kx, int64_t y, int64_t x) {
                                EXPECT_EQ(w.row(y, ky), r);
                                EXPECT_EQ(w.column(x, kx), c);
                                readers.insert(
                                    {y * w.outWidth + x, r * w.width + c});
                              });
          EXPECT_FALSE(taps.empty());
          EXPECT_EQ(taps, readers);
        }
}

TEST(Windows, FirstMaximumAndDivisor) {
  // A 3x3 window with stride 1 and one element of padding on each side
  // over a 3x3 image: output (0, 0) reads rows and columns 0..1.
  Window2d w = makeWindow(3, 3, 1, 1, 1, 1);
  w.width = 3;
  w.kernel[1] = 3;
  w.strides[1] = 1;
  w.outWidth = 3;
  ASSERT_EQ(w.outHeight, 3);
  std::vector<float> plane = {1, 5, 2, //
                              5, 0, 3, //
                              4, 4, 4};
  // Ties take the first in the window's row-major order.
  EXPECT_EQ(firstMaximum(w, plane.data(), 0, 0), 1);
  EXPECT_EQ(firstMaximum(w, plane.data(), 2, 2), 7);
  // A NaN replaces any value, the last NaN seen.
  plane[4] = NAN;
  EXPECT_EQ(firstMaximum(w, plane.data(), 1, 1), 4);
  // The corner covers 4 image elements of its 9 taps.
  EXPECT_EQ(poolingDivisor(w, false, 0, 0), 4);
  EXPECT_EQ(poolingDivisor(w, true, 0, 0), 9);
  EXPECT_EQ(poolingDivisor(w, false, 1, 1), 9);
}

} // namespace

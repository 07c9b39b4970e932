#include "engine/config/ip.h"

#include <string>

#include "gtest/gtest.h"

namespace provisioner::config {
namespace {

using namespace std::string_literals;

TEST(ParseIpTest, AcceptsIpv4AndIpv6) {
  auto v4 = ParseIp("172.16.11.1");
  ASSERT_TRUE(v4.has_value());
  EXPECT_EQ(v4->version, 4);
  EXPECT_EQ(v4->bytes[0], 172);
  EXPECT_EQ(v4->bytes[3], 1);
  EXPECT_EQ(FormatIp(*v4), "172.16.11.1");

  auto v6 = ParseIp("fd00:11::1");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->version, 6);
  EXPECT_EQ(FormatIp(*v6), "fd00:11::1");
  EXPECT_EQ(FormatIp(*ParseIp("FD00:0011:0000::0001")), "fd00:11::1");
  EXPECT_EQ(ParseIp("::ffff:1.2.3.4")->version, 6);
}

TEST(ParseIpTest, RejectsMalformedAddresses) {
  for (const std::string& bad :
       {""s, "1.2.3"s, "1.2.3.4.5"s, "256.1.1.1"s, "01.2.3.4"s, " 1.2.3.4"s, "1.2.3.4 "s,
        "1.2.3.4/24"s, "fe80::1%eth0"s, "fd00:::1"s, "abc"s, "1.2.3.4\0junk"s,
        std::string(100, '1')}) {
    EXPECT_FALSE(ParseIp(bad).has_value()) << bad;
  }
}

TEST(CompareIpTest, OrdersNumerically) {
  EXPECT_LT(CompareIp(*ParseIp("10.0.0.9"), *ParseIp("10.0.0.10")), 0);
  EXPECT_GT(CompareIp(*ParseIp("10.0.1.0"), *ParseIp("10.0.0.255")), 0);
  EXPECT_EQ(CompareIp(*ParseIp("fd00::1"), *ParseIp("fd00:0::01")), 0);
  EXPECT_LT(CompareIp(*ParseIp("255.255.255.255"), *ParseIp("::")), 0);  // v4 before v6
}

TEST(ParseCidrTest, ParsesPrefixes) {
  auto p = ParseCidr("172.16.11.0/24");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->length, 24);
  EXPECT_FALSE(p->HasHostBits());
  EXPECT_EQ(p->ToString(), "172.16.11.0/24");

  auto host_bits = ParseCidr("172.16.11.0/16");
  ASSERT_TRUE(host_bits.has_value());
  EXPECT_TRUE(host_bits->HasHostBits());
  EXPECT_EQ(host_bits->ToString(), "172.16.0.0/16");

  EXPECT_EQ(ParseCidr("0.0.0.0/0")->ToString(), "0.0.0.0/0");
  EXPECT_EQ(ParseCidr("10.1.2.3/32")->ToString(), "10.1.2.3/32");
  EXPECT_EQ(ParseCidr("fd00:11::/64")->ToString(), "fd00:11::/64");
  EXPECT_EQ(ParseCidr("fd00::1/127")->ToString(), "fd00::/127");
  EXPECT_EQ(ParseCidr("fd00::1/128")->length, 128);
}

TEST(ParseCidrTest, RejectsBadPrefixes) {
  for (const char* bad : {"172.16.11.0", "172.16.11.0/", "172.16.11.0/33", "fd00::/129",
                          "172.16.11.0/024", "172.16.11.0/-1", "172.16.11.0/2a", "/24",
                          "172.16.11.0/24/1", "x/24", "172.16.11.0/+8"}) {
    EXPECT_FALSE(ParseCidr(bad).has_value()) << bad;
  }
}

TEST(IpPrefixTest, Contains) {
  auto p = *ParseCidr("172.16.11.0/24");
  EXPECT_TRUE(p.Contains(*ParseIp("172.16.11.0")));
  EXPECT_TRUE(p.Contains(*ParseIp("172.16.11.255")));
  EXPECT_FALSE(p.Contains(*ParseIp("172.16.12.0")));
  EXPECT_FALSE(p.Contains(*ParseIp("::ffff:172.16.11.1")));  // other version

  auto odd = *ParseCidr("10.0.0.0/13");
  EXPECT_TRUE(odd.Contains(*ParseIp("10.7.255.255")));
  EXPECT_FALSE(odd.Contains(*ParseIp("10.8.0.0")));

  auto v6 = *ParseCidr("fd00:11::/64");
  EXPECT_TRUE(v6.Contains(*ParseIp("fd00:11::ffff:1")));
  EXPECT_FALSE(v6.Contains(*ParseIp("fd00:12::1")));
  EXPECT_FALSE(v6.Contains(*ParseIp("10.0.0.1")));

  EXPECT_TRUE(ParseCidr("0.0.0.0/0")->Contains(*ParseIp("203.0.113.9")));
}

TEST(ParseIpRangeTest, RangesAndSingleAddresses) {
  auto r = ParseIpRange("172.16.11.1-172.16.11.200");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(FormatIp(r->first), "172.16.11.1");
  EXPECT_EQ(FormatIp(r->last), "172.16.11.200");

  auto single = ParseIpRange("172.16.11.7");
  ASSERT_TRUE(single.has_value());
  EXPECT_EQ(CompareIp(single->first, single->last), 0);

  auto v6 = ParseIpRange("fd00::1-fd00::10");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->last.version, 6);

  // Order is the caller's business.
  EXPECT_TRUE(ParseIpRange("10.0.0.9-10.0.0.1").has_value());
}

TEST(ParseIpRangeTest, RejectsMalformedRanges) {
  for (const char* bad : {"", "-", "10.0.0.1-", "-10.0.0.1", "10.0.0.1-fd00::1",
                          "10.0.0.1 - 10.0.0.2", "10.0.0.1-10.0.0.2-10.0.0.3", "10.0.0.0/24",
                          "a-b"}) {
    EXPECT_FALSE(ParseIpRange(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace provisioner::config

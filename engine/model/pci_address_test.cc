#include "engine/model/pci_address.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace provisioner {
namespace {

std::string Canonical(const std::optional<PciAddress>& a) { return a ? a->ToString() : "none"; }

TEST(PciAddressTest, ParsesTheFullFormIntoItsParts) {
  auto a = PciAddress::Parse("0001:af:1f.7");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->domain(), 1u);
  EXPECT_EQ(a->bus(), 0xaf);
  EXPECT_EQ(a->device(), 0x1f);
  EXPECT_EQ(a->function(), 7);
  EXPECT_EQ(a->ToString(), "0001:af:1f.7");
}

TEST(PciAddressTest, ShortFormIsDomainZero) {
  EXPECT_EQ(Canonical(PciAddress::Parse("af:00.1")), "0000:af:00.1");
  EXPECT_EQ(PciAddress::Parse("af:00.1"), PciAddress::Parse("0000:af:00.1"));
}

TEST(PciAddressTest, HexInEitherCaseToStringIsLowerCase) {
  EXPECT_EQ(Canonical(PciAddress::Parse("00AB:AF:0E.0")), "00ab:af:0e.0");
  EXPECT_EQ(Canonical(PciAddress::Parse("Af:1F.3")), "0000:af:1f.3");
  EXPECT_EQ(Canonical(PciAddress::ParseFull("ABCD:EF:1A.2")), "abcd:ef:1a.2");
}

TEST(PciAddressTest, DeviceAndFunctionOutOfRangeAreRefused) {
  EXPECT_TRUE(PciAddress::Parse("0000:00:1f.7"));
  EXPECT_FALSE(PciAddress::Parse("0000:00:20.0"));  // device is 5 bits
  EXPECT_FALSE(PciAddress::Parse("0000:00:ff.0"));
  EXPECT_FALSE(PciAddress::Parse("0000:00:00.8"));  // function is 3 bits
  EXPECT_FALSE(PciAddress::Parse("0000:00:00.f"));
  EXPECT_FALSE(PciAddress::Parse("00:20.0"));
  EXPECT_FALSE(PciAddress::ParseFull("0000:af:00.8"));
  EXPECT_FALSE(PciAddress::ParseSysfsName("10000:e1:20.0"));
  EXPECT_FALSE(PciAddress::ParseSysfsName("0000:e1:00.9"));
}

TEST(PciAddressTest, AnythingElseIsNoAddress) {
  const char* kBad[] = {"",
                        "0000",
                        "0000:af:00",
                        "0000:af:00.",
                        "0000:af:00.00",
                        "000:af:00.0",
                        "0000:af:0.0",
                        "0000:a:00.0",
                        "0000:af.00.0",
                        "0000-af:00.0",
                        "0000:af:00:0",
                        "0000:ag:00.0",
                        "0x00:af:00.0",
                        "0xaf:00.0",
                        " 0000:af:00.0",
                        "0000:af:00.0 ",
                        "0000:af:00.0\n",
                        "af:00.0/..",
                        "../af:00.0",
                        "0000:+f:00.0",
                        "0000:af:-1.0",
                        "f:00.0",
                        "aff:00.0"};
  for (const char* bad : kBad) {
    EXPECT_FALSE(PciAddress::Parse(bad)) << '"' << bad << '"';
    EXPECT_FALSE(PciAddress::ParseFull(bad)) << '"' << bad << '"';
    EXPECT_FALSE(PciAddress::ParseSysfsName(bad)) << '"' << bad << '"';
  }
}

TEST(PciAddressTest, ParseFullRefusesTheShortForm) {
  EXPECT_FALSE(PciAddress::ParseFull("af:00.0"));
  EXPECT_FALSE(PciAddress::ParseSysfsName("af:00.0"));
  EXPECT_EQ(Canonical(PciAddress::ParseFull("0000:af:00.0")), "0000:af:00.0");
}

TEST(PciAddressTest, OnlySysfsNamesHaveWideDomains) {
  // VMD domains: the kernel prints %04x of a 32-bit domain.
  auto vmd = PciAddress::ParseSysfsName("10000:E1:00.0");
  ASSERT_TRUE(vmd);
  EXPECT_EQ(vmd->domain(), 0x10000u);
  EXPECT_EQ(vmd->ToString(), "10000:e1:00.0");
  EXPECT_EQ(Canonical(PciAddress::ParseSysfsName("ffffffff:00:00.0")), "ffffffff:00:00.0");
  EXPECT_EQ(Canonical(PciAddress::ParseSysfsName("0000:af:00.0")), "0000:af:00.0");
  EXPECT_FALSE(PciAddress::ParseSysfsName("100000000:00:00.0"));  // more than 32 bits
  EXPECT_FALSE(PciAddress::ParseSysfsName("00000:af:00.0"));      // %04x pads to four only
  EXPECT_FALSE(PciAddress::Parse("10000:e1:00.0"));
  EXPECT_FALSE(PciAddress::ParseFull("10000:e1:00.0"));
}

TEST(PciAddressTest, ToStringParsesBackToTheSameAddress) {
  for (const char* text : {"0000:00:00.0", "ffff:ff:1f.7", "0000:af:00.1", "10000:e1:1d.7"}) {
    auto a = PciAddress::ParseSysfsName(text);
    ASSERT_TRUE(a) << text;
    EXPECT_EQ(a->ToString(), text);
    EXPECT_EQ(PciAddress::ParseSysfsName(a->ToString()), a);
  }
}

TEST(PciAddressTest, OrdersByDomainBusDeviceFunction) {
  std::vector<PciAddress> v;
  for (const char* text : {"10000:00:00.0", "0001:00:00.0", "0000:af:00.1", "0000:af:00.0",
                           "0000:3b:00.0", "0000:af:01.0", "ffff:00:00.0"}) {
    v.push_back(*PciAddress::ParseSysfsName(text));
  }
  std::sort(v.begin(), v.end());
  std::vector<std::string> sorted;
  for (const PciAddress& a : v) sorted.push_back(a.ToString());
  // Numeric, not text order: the VMD domain 10000 sorts after ffff.
  EXPECT_EQ(sorted, (std::vector<std::string>{"0000:3b:00.0", "0000:af:00.0", "0000:af:00.1",
                                              "0000:af:01.0", "0001:00:00.0", "ffff:00:00.0",
                                              "10000:00:00.0"}));
  const PciAddress a = *PciAddress::Parse("af:00.0");
  const PciAddress b = *PciAddress::Parse("af:00.1");
  EXPECT_TRUE(a == *PciAddress::Parse("0000:AF:00.0"));
  EXPECT_TRUE(a != b);
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(a <= b);
  EXPECT_TRUE(a <= a);
  EXPECT_TRUE(b > a);
  EXPECT_TRUE(b >= a);
  EXPECT_TRUE(b >= b);
  EXPECT_FALSE(a < a);
  EXPECT_FALSE(a > b);
}

}  // namespace
}  // namespace provisioner

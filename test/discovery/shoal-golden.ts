// Golden answers of a Shoal server (hep-gc/shoal at 7ca44b8, shoal_server 1.1.0, Python 3.11,
// web.py 0.76) for three caches and a client at 192.0.2.77. They were produced by feeding the
// heartbeats below through the server's own RabbitMQConsumer.on_message and calling its
// view_nearest / view_allcaches / view_wpad, with the clock fixed at 1700000000.5, a geolocation
// table of the three addresses (as its MariaDB table would answer), and every cache verified as
// its CacheVerifier would leave it. Each /nearest* answer was then read back with the regular
// expressions of shoal-client 1.0.4 (see shoal-client-parse.ts), which find every cache.

export const GOLDEN_NOW_MS = 1_700_000_000_500;
export const GOLDEN_CLIENT_IP = '192.0.2.77';

/** The heartbeats, as a Python 3 Shoal agent writes them (json.dumps). */
export const GOLDEN_HEARTBEATS: readonly string[] = [
  "{\"uuid\": \"a1\", \"hostname\": \"squid1.example.org\", \"squid_port\": 3128, \"verified\": false, \"max_load\": 122000, \"public_ip\": \"198.51.100.10\", \"private_ip\": \"10.1.0.5\", \"timestamp\": 1700000000.5, \"load\": 12.5}",
  "{\"uuid\": \"b2\", \"hostname\": \"squid2.example.org\", \"squid_port\": 3128, \"verified\": false, \"max_load\": 122000, \"external_ip\": \"203.0.113.20\", \"private_ip\": \"10.2.0.5\", \"timestamp\": 1700000000.5, \"load\": 0.0}",
  "{\"uuid\": \"c3\", \"hostname\": \"varnish.example.org\", \"cache_port\": 6081, \"cache_type\": \"varnish\", \"upstream\": \"cvmfs\", \"verified\": false, \"max_load\": 122000, \"public_ip\": \"198.51.100.10\", \"timestamp\": 1700000000.5, \"load\": 100.0}"
];

/** Where the geolocation table puts each address. */
export const GOLDEN_GEO = {
  "192.0.2.77": {
    "city": "Victoria",
    "country": "Canada",
    "country_code": "CA",
    "continent": "North America",
    "continent_code": "NA",
    "latitude": 48.4284,
    "longitude": -123.3656,
    "region": "British Columbia"
  },
  "198.51.100.10": {
    "city": "Montréal",
    "country": "Canada",
    "country_code": "CA",
    "continent": "North America",
    "continent_code": "NA",
    "latitude": 45.5017,
    "longitude": -73.5673,
    "region": "Quebec"
  },
  "203.0.113.20": {
    "city": "Genève",
    "country": "Switzerland",
    "country_code": "CH",
    "continent": "Europe",
    "continent_code": "EU",
    "latitude": 46.2044,
    "longitude": 6.1432,
    "region": "Geneva"
  }
};

/** GET /nearest/20 (and /nearest/2: there are only two squids). */
export const GOLDEN_NEAREST = "{\"0\": {\"created\": 1700000000.5, \"last_active\": 1700000000.5, \"hostname\": \"squid1.example.org\", \"squid_port\": 3128, \"public_ip\": \"198.51.100.10\", \"private_ip\": \"10.1.0.5\", \"external_ip\": null, \"geo_data\": {\"city\": \"Montr\\u00e9al\", \"region_code\": null, \"time_zone\": null, \"metro_code\": null, \"latitude\": 45.5017, \"longitude\": -73.5673, \"postal_code\": null, \"country_code\": \"CA\", \"country_name\": \"Canada\", \"continent\": \"NA\"}, \"load\": 12.5, \"verified\": true, \"global_access\": true, \"max_load\": 122000, \"local\": null, \"cache_type\": \"squid\", \"upstream\": \"both\", \"distance\": 0.093126926730949}, \"1\": {\"created\": 1700000000.5, \"last_active\": 1700000000.5, \"hostname\": \"squid2.example.org\", \"squid_port\": 3128, \"public_ip\": \"203.0.113.20\", \"private_ip\": \"10.2.0.5\", \"external_ip\": \"203.0.113.20\", \"geo_data\": {\"city\": \"Gen\\u00e8ve\", \"region_code\": null, \"time_zone\": null, \"metro_code\": null, \"latitude\": 46.2044, \"longitude\": 6.1432, \"postal_code\": null, \"country_code\": \"CH\", \"country_name\": \"Switzerland\", \"continent\": \"EU\"}, \"load\": 0.0, \"verified\": true, \"global_access\": true, \"max_load\": 122000, \"local\": null, \"cache_type\": \"squid\", \"upstream\": \"both\", \"distance\": 0.21013942310562198}}";

/** GET /nearestcvmfs/20 */
export const GOLDEN_NEAREST_CVMFS = "{\"0\": {\"created\": 1700000000.5, \"last_active\": 1700000000.5, \"hostname\": \"squid1.example.org\", \"squid_port\": 3128, \"public_ip\": \"198.51.100.10\", \"private_ip\": \"10.1.0.5\", \"external_ip\": null, \"geo_data\": {\"city\": \"Montr\\u00e9al\", \"region_code\": null, \"time_zone\": null, \"metro_code\": null, \"latitude\": 45.5017, \"longitude\": -73.5673, \"postal_code\": null, \"country_code\": \"CA\", \"country_name\": \"Canada\", \"continent\": \"NA\"}, \"load\": 12.5, \"verified\": true, \"global_access\": true, \"max_load\": 122000, \"local\": null, \"cache_type\": \"squid\", \"upstream\": \"both\", \"distance\": 0.093126926730949}, \"1\": {\"created\": 1700000000.5, \"last_active\": 1700000000.5, \"hostname\": \"varnish.example.org\", \"squid_port\": 6081, \"public_ip\": \"198.51.100.10\", \"private_ip\": null, \"external_ip\": null, \"geo_data\": {\"city\": \"Montr\\u00e9al\", \"region_code\": null, \"time_zone\": null, \"metro_code\": null, \"latitude\": 45.5017, \"longitude\": -73.5673, \"postal_code\": null, \"country_code\": \"CA\", \"country_name\": \"Canada\", \"continent\": \"NA\"}, \"load\": 100.0, \"verified\": true, \"global_access\": true, \"max_load\": 122000, \"local\": null, \"cache_type\": \"varnish\", \"upstream\": \"cvmfs\", \"distance\": 0.09348553328832604}, \"2\": {\"created\": 1700000000.5, \"last_active\": 1700000000.5, \"hostname\": \"squid2.example.org\", \"squid_port\": 3128, \"public_ip\": \"203.0.113.20\", \"private_ip\": \"10.2.0.5\", \"external_ip\": \"203.0.113.20\", \"geo_data\": {\"city\": \"Gen\\u00e8ve\", \"region_code\": null, \"time_zone\": null, \"metro_code\": null, \"latitude\": 46.2044, \"longitude\": 6.1432, \"postal_code\": null, \"country_code\": \"CH\", \"country_name\": \"Switzerland\", \"continent\": \"EU\"}, \"load\": 0.0, \"verified\": true, \"global_access\": true, \"max_load\": 122000, \"local\": null, \"cache_type\": \"squid\", \"upstream\": \"both\", \"distance\": 0.21013942310562198}}";

/** GET /all */
export const GOLDEN_ALL = "{\"0\": {\"created\": 1700000000.5, \"last_active\": 1700000000.5, \"hostname\": \"squid1.example.org\", \"squid_port\": 3128, \"public_ip\": \"198.51.100.10\", \"private_ip\": \"10.1.0.5\", \"external_ip\": null, \"geo_data\": {\"city\": \"Montr\\u00e9al\", \"region_code\": null, \"time_zone\": null, \"metro_code\": null, \"latitude\": 45.5017, \"longitude\": -73.5673, \"postal_code\": null, \"country_code\": \"CA\", \"country_name\": \"Canada\", \"continent\": \"NA\"}, \"load\": 12.5, \"verified\": true, \"global_access\": true, \"max_load\": 122000, \"local\": null, \"cache_type\": \"squid\", \"upstream\": \"both\"}, \"1\": {\"created\": 1700000000.5, \"last_active\": 1700000000.5, \"hostname\": \"squid2.example.org\", \"squid_port\": 3128, \"public_ip\": \"203.0.113.20\", \"private_ip\": \"10.2.0.5\", \"external_ip\": \"203.0.113.20\", \"geo_data\": {\"city\": \"Gen\\u00e8ve\", \"region_code\": null, \"time_zone\": null, \"metro_code\": null, \"latitude\": 46.2044, \"longitude\": 6.1432, \"postal_code\": null, \"country_code\": \"CH\", \"country_name\": \"Switzerland\", \"continent\": \"EU\"}, \"load\": 0.0, \"verified\": true, \"global_access\": true, \"max_load\": 122000, \"local\": null, \"cache_type\": \"squid\", \"upstream\": \"both\"}, \"2\": {\"created\": 1700000000.5, \"last_active\": 1700000000.5, \"hostname\": \"varnish.example.org\", \"squid_port\": 6081, \"public_ip\": \"198.51.100.10\", \"private_ip\": null, \"external_ip\": null, \"geo_data\": {\"city\": \"Montr\\u00e9al\", \"region_code\": null, \"time_zone\": null, \"metro_code\": null, \"latitude\": 45.5017, \"longitude\": -73.5673, \"postal_code\": null, \"country_code\": \"CA\", \"country_name\": \"Canada\", \"continent\": \"NA\"}, \"load\": 100.0, \"verified\": true, \"global_access\": true, \"max_load\": 122000, \"local\": null, \"cache_type\": \"varnish\", \"upstream\": \"cvmfs\"}}";

/** GET /wpad.dat */
export const GOLDEN_WPAD = "function FindProxyForURL(url, host)\n{\n    return \"PROXY http://squid1.example.org:3128;PROXY http://squid2.example.org:3128; DIRECT\";\n}\n";

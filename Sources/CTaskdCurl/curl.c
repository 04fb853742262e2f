#include "CTaskdCurl.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct taskd_http {
    CURL *easy;
    struct curl_slist *headers;
    taskd_http_sink sink;
    void *context;
    int grpc_status;         // -1 until a grpc-status header or trailer came
    char grpc_message[256];  // grpc-message, as sent (percent-encoded)
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static void global_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

static size_t on_data(char *data, size_t size, size_t count, void *raw) {
    taskd_http *http = raw;
    size_t length = size * count;
    if (http->sink && http->sink(http->context, data, length) != 0) return 0;  // CURLE_WRITE_ERROR
    return length;
}

/* Headers and trailers (curl passes HTTP/2 trailers here too): grpc-status and grpc-message. */
static size_t on_header(char *data, size_t size, size_t count, void *raw) {
    taskd_http *http = raw;
    size_t length = size * count;
    static const char status[] = "grpc-status:", message[] = "grpc-message:";
    if (length > sizeof status - 1 && strncasecmp(data, status, sizeof status - 1) == 0) {
        http->grpc_status = atoi(data + sizeof status - 1);
    } else if (length > sizeof message - 1 && strncasecmp(data, message, sizeof message - 1) == 0) {
        size_t start = sizeof message - 1, end = length;
        while (start < end && data[start] == ' ') start++;
        while (end > start && (data[end - 1] == '\r' || data[end - 1] == '\n')) end--;
        size_t n = end - start < sizeof http->grpc_message - 1 ? end - start : sizeof http->grpc_message - 1;
        memcpy(http->grpc_message, data + start, n);
        http->grpc_message[n] = 0;
    }
    return length;
}

static int on_progress(void *raw, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    taskd_http *http = raw;
    return http->sink ? http->sink(http->context, NULL, 0) : 0;
}

taskd_http *taskd_http_new(const char *ca_file, const char *cert_file, const char *key_file) {
    pthread_once(&global_once, global_init);
    taskd_http *http = calloc(1, sizeof *http);
    if (!http) return NULL;
    http->easy = curl_easy_init();
    if (!http->easy) {
        free(http);
        return NULL;
    }
    CURL *e = http->easy;
    // gRPC over HTTP/2: h2c with prior knowledge on http://, ALPN h2 on https://.
    http->headers = curl_slist_append(NULL, "Content-Type: application/grpc");
    http->headers = curl_slist_append(http->headers, "TE: trailers");
    http->headers = curl_slist_append(http->headers, "Expect:");  // no 100-continue round trip
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, http);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, http->headers);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);  // many threads: no SIGALRM for timeouts
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    // A member that vanishes without a FIN (host down, cable cut) ends a watch within ~15 s.
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 5L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 2L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, http);
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, http);
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    if (ca_file) curl_easy_setopt(e, CURLOPT_CAINFO, ca_file);
    if (cert_file) curl_easy_setopt(e, CURLOPT_SSLCERT, cert_file);
    if (key_file) curl_easy_setopt(e, CURLOPT_SSLKEY, key_file);
    return http;
}

void taskd_http_free(taskd_http *http) {
    if (!http) return;
    curl_easy_cleanup(http->easy);
    curl_slist_free_all(http->headers);
    free(http);
}

int taskd_http_post(taskd_http *http, const char *url, const char *body, size_t length, long timeout_ms,
                    long connect_timeout_ms, taskd_http_sink sink, void *context, long *status) {
    CURL *e = http->easy;
    http->sink = sink;
    http->context = context;
    http->grpc_status = -1;
    http->grpc_message[0] = 0;
    curl_easy_setopt(e, CURLOPT_URL, url);
    // curl 7.88.1 (Debian 12) fails every request after the first on a kept h2c connection (HTTP/2
    // with prior knowledge, http://) at once with CURLE_HTTP2 (seen; its ALPN h2 over TLS reuses
    // fine): a plaintext request gets a connection of its own, a TLS one keeps its connection.
    long plain = strncasecmp(url, "http://", 7) == 0;
    curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, plain);
    curl_easy_setopt(e, CURLOPT_FORBID_REUSE, plain);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)length);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms);
    CURLcode rc = curl_easy_perform(e);
    *status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
    http->sink = NULL;
    http->context = NULL;
    return (int)rc;
}

int taskd_http_grpc_status(const taskd_http *http) { return http->grpc_status; }
const char *taskd_http_grpc_message(const taskd_http *http) { return http->grpc_message; }

const char *taskd_http_strerror(int code) { return curl_easy_strerror((CURLcode)code); }

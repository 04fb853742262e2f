#pragma once
// One persistent HTTP/2 connection for etcd's gRPC API, in C because curl_easy_setopt is
// variadic: a handle keeps its connection (and TLS session) between requests to one endpoint.
#include <stddef.h>

typedef struct taskd_http taskd_http;

/// Called with each piece of the answer's body as it arrives, and with (NULL, 0) now and then
/// while a request waits (at least about once a second): nonzero aborts the request
/// (CURLE_WRITE_ERROR or CURLE_ABORTED_BY_CALLBACK).
typedef int (*taskd_http_sink)(void *context, const char *data, size_t length);

/// A handle with TLS set from the files given (each may be NULL: the system's CAs, no client
/// certificate); NULL if curl could not make one.
taskd_http *taskd_http_new(const char *ca_file, const char *cert_file, const char *key_file);
void taskd_http_free(taskd_http *http);

/// POSTs `body` (gRPC frames) to `url` on the kept connection, within `timeout_ms` in all (0: none) and
/// `connect_timeout_ms` to connect: curl's result code (0: an answer came), and in *status the
/// HTTP status.
int taskd_http_post(taskd_http *http, const char *url, const char *body, size_t length, long timeout_ms,
                    long connect_timeout_ms, taskd_http_sink sink, void *context, long *status);

/// The last request's gRPC status (its grpc-status header or trailer; -1: none came) and message.
int taskd_http_grpc_status(const taskd_http *http);
const char *taskd_http_grpc_message(const taskd_http *http);

/// curl's text for a result code, for messages (never to classify by).
const char *taskd_http_strerror(int code);

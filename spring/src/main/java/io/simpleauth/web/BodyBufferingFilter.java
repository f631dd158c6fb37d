package io.simpleauth.web;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.Arrays;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Reads the body of a POST to /token or /revoke without holding a request thread while it arrives, then hands the
 * request on to Spring MVC with the body in memory. Tomcat runs requests on a fixed pool of platform threads
 * ({@code Settings#requestThreads}), and a servlet that reads its body with a blocking read keeps one of them until
 * the last byte is in, so a few dozen connections sending their bodies a byte at a time would hold them all (the fault
 * suite's slow-body test). Here the request goes
 * asynchronous (Servlet non-blocking IO): a {@link ReadListener} takes what has arrived each time Tomcat's poller sees
 * more, on a thread only for that moment, and once the body is complete the request is dispatched again, its input
 * stream replaced by the bytes read. A body with an announced length that is already in Tomcat's buffers when the
 * request comes, as nearly always, is read at once instead ({@link #readBuffered}: only what {@code available()} says
 * can be read without blocking), and the request goes on without the asynchronous cycle.
 * <p>
 * The body is read up to one byte past {@link TokenController#MAX_BODY_BYTES}, so that the controller still answers
 * an oversized chunked body 413; a larger announced length is not read at all (the controller answers 413 at once). A
 * body that does not arrive within {@value #BODY_TIMEOUT_MS} ms, or a read that fails, reaches the controller as a
 * body that could not be read (400).
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 1) // after MethodRulesFilter: a 405 never waits for a body
public class BodyBufferingFilter extends OncePerRequestFilter {

	static final long BODY_TIMEOUT_MS = 30_000;

	private final long timeoutMs;

	public BodyBufferingFilter() {
		this(BODY_TIMEOUT_MS);
	}

	BodyBufferingFilter(long timeoutMs) {
		this.timeoutMs = timeoutMs;
	}

	@Override
	protected boolean shouldNotFilter(HttpServletRequest request) {
		return !"POST".equals(request.getMethod()) || Routes.allowFor(request.getRequestURI()) != Routes.POST;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		long announced = request.getContentLengthLong();
		boolean hasBody = announced > 0 || (announced < 0 && request.getHeader("Transfer-Encoding") != null);
		if (!hasBody || announced > TokenController.MAX_BODY_BYTES) {
			chain.doFilter(request, response); // nothing to wait for, or answered 413 without reading
			return;
		}
		ServletInputStream in = request.getInputStream();
		byte[] body = new byte[announced > 0 ? (int) announced : 1024];
		int length = announced > 0 ? readBuffered(in, body) : 0;
		if (length == announced) {
			chain.doFilter(new BufferedRequest(request, body, length), response);
			return;
		}
		BufferedRequest buffered = new BufferedRequest(request);
		AsyncContext async = request.startAsync(buffered, response);
		async.setTimeout(this.timeoutMs);
		async.addListener(buffered);
		in.setReadListener(new Reader(in, buffered, async, body, length));
	}

	/**
	 * Reads into {@code body} what has already arrived of the request's body, up to its length, and never waits: a read
	 * is made only while {@code available()} says bytes can be read without blocking. The count read.
	 */
	static int readBuffered(ServletInputStream in, byte[] body) throws IOException {
		int length = 0;
		while (length < body.length && in.available() > 0) {
			int n = in.read(body, length, body.length - length);
			if (n < 0) {
				break;
			}
			length += n;
		}
		return length;
	}

	/** Takes the body as it arrives; dispatches once it is complete, too large, or cannot be read. */
	private static final class Reader implements ReadListener {

		private final ServletInputStream in;

		private final BufferedRequest request;

		private final AsyncContext async;

		private byte[] body;

		private int length;

		/** Goes on from the first {@code length} bytes of {@code body}, read before the request went asynchronous. */
		Reader(ServletInputStream in, BufferedRequest request, AsyncContext async, byte[] body, int length) {
			this.in = in;
			this.request = request;
			this.async = async;
			this.body = body;
			this.length = length;
		}

		@Override
		public void onDataAvailable() throws IOException {
			while (!this.request.dispatched() && this.in.isReady()) {
				if (this.length == this.body.length) {
					this.body = Arrays.copyOf(this.body, Math.min(2 * this.body.length, TokenController.MAX_BODY_BYTES + 1));
				}
				int n = this.in.read(this.body, this.length, this.body.length - this.length);
				if (n < 0) {
					return; // onAllDataRead follows
				}
				this.length += n;
				if (this.length > TokenController.MAX_BODY_BYTES) {
					this.request.complete(this.body, this.length, this.async); // the controller: 413
					return;
				}
			}
		}

		@Override
		public void onAllDataRead() {
			this.request.complete(this.body, this.length, this.async);
		}

		@Override
		public void onError(Throwable failure) {
			this.request.fail(this.async);
		}

	}

	/**
	 * The request as Spring MVC sees it after the body is read: its input stream is the body in memory, or throws when
	 * the body could not be read. Also the async cycle's listener, so that a body that never completes is dispatched
	 * as unreadable when the timeout comes.
	 */
	static final class BufferedRequest extends HttpServletRequestWrapper implements AsyncListener {

		private volatile BodyStream body;

		private volatile boolean dispatched;

		BufferedRequest(HttpServletRequest request) {
			super(request);
		}

		/** A request whose body was read whole before it was handed on: nothing to dispatch. */
		BufferedRequest(HttpServletRequest request, byte[] body, int length) {
			super(request);
			this.body = new BodyStream(body, length);
			this.dispatched = true;
		}

		/** Dispatches with the body's first {@code length} bytes, once: the first of complete, fail and the timeout wins. */
		synchronized void complete(byte[] body, int length, AsyncContext async) {
			if (!this.dispatched) {
				this.dispatched = true;
				this.body = new BodyStream(body, length);
				async.dispatch();
			}
		}

		synchronized void fail(AsyncContext async) {
			if (!this.dispatched) {
				this.dispatched = true;
				async.dispatch();
			}
		}

		/** Whether the request has been handed on: nothing more is read for it (its body array is now the request's). */
		boolean dispatched() {
			return this.dispatched;
		}

		@Override
		public ServletInputStream getInputStream() throws IOException {
			BodyStream stream = this.body;
			if (stream == null) {
				throw new IOException("the request body could not be read");
			}
			return stream;
		}

		@Override
		public void onTimeout(AsyncEvent event) {
			fail(event.getAsyncContext());
		}

		@Override
		public void onError(AsyncEvent event) {
			fail(event.getAsyncContext());
		}

		@Override
		public void onComplete(AsyncEvent event) {
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
		}

	}

	/** A body already in memory, as a servlet input stream. */
	private static final class BodyStream extends ServletInputStream {

		private final ByteArrayInputStream bytes;

		BodyStream(byte[] body, int length) {
			this.bytes = new ByteArrayInputStream(body, 0, length);
		}

		@Override
		public int read() {
			return this.bytes.read();
		}

		@Override
		public int read(byte[] b, int off, int len) {
			return this.bytes.read(b, off, len);
		}

		@Override
		public boolean isFinished() {
			return this.bytes.available() == 0;
		}

		@Override
		public boolean isReady() {
			return true;
		}

		@Override
		public void setReadListener(ReadListener listener) {
			throw new IllegalStateException("the body is already read");
		}

	}

}

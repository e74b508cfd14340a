# The koikoi web app for compose.yaml (docs/web.md, "Scaling out"): one server process per container,
# on a PostgreSQL database.
FROM python:3.11-slim
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY src ./src
RUN pip install --no-cache-dir '.[postgres]' && useradd --create-home koikoi
USER koikoi
EXPOSE 8000
CMD ["koikoi", "serve", "--host", "0.0.0.0", "--port", "8000", "--database-url", "postgresql://koikoi:koikoi@db:5432/koikoi"]
